CREATE TABLE `news_article_tombstones` (
	`fingerprint` text PRIMARY KEY NOT NULL,
	`removed_at` integer NOT NULL
);
--> statement-breakpoint
ALTER TABLE `articles` ADD `edited_at` integer;