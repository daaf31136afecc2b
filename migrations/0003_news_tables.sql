CREATE TABLE `article_companies` (
	`article_id` integer NOT NULL,
	`ticker` text NOT NULL,
	`origin` text DEFAULT 'text' NOT NULL,
	PRIMARY KEY(`article_id`, `ticker`),
	FOREIGN KEY (`article_id`) REFERENCES `articles`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`ticker`) REFERENCES `companies`(`ticker`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `article_companies_ticker_idx` ON `article_companies` (`ticker`,`article_id`);--> statement-breakpoint
CREATE TABLE `articles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`fingerprint` text NOT NULL,
	`title` text NOT NULL,
	`abstract` text DEFAULT '' NOT NULL,
	`url` text NOT NULL,
	`thumbnail` text,
	`source` text NOT NULL,
	`published_at` integer NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `articles_fingerprint_unique` ON `articles` (`fingerprint`);--> statement-breakpoint
CREATE INDEX `articles_published_at_idx` ON `articles` (`published_at`);--> statement-breakpoint
CREATE INDEX `articles_source_published_at_idx` ON `articles` (`source`,`published_at`);--> statement-breakpoint
CREATE TABLE `companies` (
	`ticker` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`short_name` text NOT NULL,
	`website` text,
	`aliases` text DEFAULT '[]' NOT NULL
);
--> statement-breakpoint
CREATE TABLE `news_ingest_cursors` (
	`publisher` text PRIMARY KEY NOT NULL,
	`fetched_until` integer NOT NULL,
	`updated_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `news_users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`password_hash` text NOT NULL,
	`name` text NOT NULL,
	`picture` text NOT NULL,
	`role` text DEFAULT 'user' NOT NULL,
	`created_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch() * 1000) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `news_users_email_unique` ON `news_users` (`email`);