CREATE TABLE `backend_containers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`backend_id` integer NOT NULL,
	`container_id` integer NOT NULL,
	`params` text,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`backend_id`) REFERENCES `backends`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`container_id`) REFERENCES `containers`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `backend_containers_unique` ON `backend_containers` (`backend_id`,`container_id`);--> statement-breakpoint
CREATE INDEX `backend_containers_container_idx` ON `backend_containers` (`container_id`);--> statement-breakpoint
CREATE TABLE `backends` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`label` text NOT NULL,
	`fullname` text,
	`port` integer DEFAULT 80 NOT NULL,
	`params` text,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `backends_project_label_unique` ON `backends` (`project_id`,`label`);--> statement-breakpoint
CREATE TABLE `container_permissions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`container_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`permission` text NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`container_id`) REFERENCES `containers`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `container_permissions_unique` ON `container_permissions` (`container_id`,`user_id`,`permission`);--> statement-breakpoint
CREATE INDEX `container_permissions_user_idx` ON `container_permissions` (`user_id`);--> statement-breakpoint
CREATE TABLE `containers` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project_id` integer NOT NULL,
	`label` text NOT NULL,
	`fullname` text,
	`host_id` integer NOT NULL,
	`ipv6` text NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`host_id`) REFERENCES `hosts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `containers_project_label_unique` ON `containers` (`project_id`,`label`);--> statement-breakpoint
CREATE INDEX `containers_host_idx` ON `containers` (`host_id`);--> statement-breakpoint
CREATE TABLE `domains` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`domain_name` text NOT NULL,
	`backend_id` integer NOT NULL,
	`public_ca_certificate` integer DEFAULT false NOT NULL,
	`cert_provided` integer DEFAULT false NOT NULL,
	`redirect_to_url` text,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`backend_id`) REFERENCES `backends`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `domains_domain_name_unique` ON `domains` (`domain_name`);--> statement-breakpoint
CREATE INDEX `domains_backend_idx` ON `domains` (`backend_id`);--> statement-breakpoint
CREATE TABLE `hosts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hostname` text NOT NULL,
	`ipv6` text NOT NULL,
	`version` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `hosts_hostname_unique` ON `hosts` (`hostname`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`label` text NOT NULL,
	`fullname` text,
	`version` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `projects_label_unique` ON `projects` (`label`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`email` text NOT NULL,
	`fullname` text,
	`ssh_public_key` text,
	`role` text DEFAULT 'CONTACT' NOT NULL,
	`default_permission` text DEFAULT '[]' NOT NULL,
	`proxy_permission` text DEFAULT '[]' NOT NULL,
	`version` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);