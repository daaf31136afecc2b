DROP INDEX `haproxy_version_files_unique`;--> statement-breakpoint
ALTER TABLE `haproxy_version_files` ADD `part` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `haproxy_version_files_part_unique` ON `haproxy_version_files` (`version_id`,`name`,`part`);