CREATE TABLE `acme_accounts` (
	`directory_url` text PRIMARY KEY NOT NULL,
	`email` text,
	`private_jwk` text NOT NULL,
	`account_url` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `acme_challenges` (
	`token` text PRIMARY KEY NOT NULL,
	`key_authorization` text NOT NULL,
	`domain_name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `certificate_attempts` (
	`domain_name` text PRIMARY KEY NOT NULL,
	`last_attempt_at` integer NOT NULL,
	`outcome` text NOT NULL,
	`consecutive_failures` integer DEFAULT 0 NOT NULL,
	`last_error` text
);
--> statement-breakpoint
CREATE TABLE `certificates` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`source` text NOT NULL,
	`domain_names` text NOT NULL,
	`issuer` text NOT NULL,
	`serial_number` text NOT NULL,
	`not_before` integer NOT NULL,
	`not_after` integer NOT NULL,
	`certificate_pem` text NOT NULL,
	`private_key_pem` text NOT NULL,
	`updated_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `certificates_name_unique` ON `certificates` (`name`);--> statement-breakpoint
CREATE INDEX `certificates_not_after_idx` ON `certificates` (`not_after`);--> statement-breakpoint
CREATE TABLE `haproxy_version_files` (
	`version_id` integer NOT NULL,
	`name` text NOT NULL,
	`content` text NOT NULL,
	FOREIGN KEY (`version_id`) REFERENCES `haproxy_versions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `haproxy_version_files_unique` ON `haproxy_version_files` (`version_id`,`name`);--> statement-breakpoint
CREATE TABLE `haproxy_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`digest` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`error` text,
	`job_run_id` integer,
	`certificate_files` text DEFAULT '[]' NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ssh_proxy_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`digest` text NOT NULL,
	`job_run_id` integer,
	`accounts` text NOT NULL,
	`yaml` text NOT NULL,
	`warnings` text DEFAULT '[]' NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
