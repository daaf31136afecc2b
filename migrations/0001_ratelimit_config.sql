CREATE TABLE `ratelimit_config_files` (
	`name` text PRIMARY KEY NOT NULL,
	`content` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ratelimit_config_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	`source` text NOT NULL,
	`updated_at` integer DEFAULT (unixepoch() * 1000) NOT NULL,
	CONSTRAINT "single_row" CHECK("ratelimit_config_state"."id" = 1)
);
