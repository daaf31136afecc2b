CREATE TABLE `ssh_proxy_version_files` (
	`version_id` integer NOT NULL,
	`name` text NOT NULL,
	`part` integer DEFAULT 0 NOT NULL,
	`content` text NOT NULL,
	FOREIGN KEY (`version_id`) REFERENCES `ssh_proxy_versions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ssh_proxy_version_files_part_unique` ON `ssh_proxy_version_files` (`version_id`,`name`,`part`);--> statement-breakpoint
INSERT INTO `ssh_proxy_version_files` (`version_id`, `name`, `part`, `content`)
	SELECT `id`, 'accounts.json', 0, `accounts` FROM `ssh_proxy_versions`;--> statement-breakpoint
INSERT INTO `ssh_proxy_version_files` (`version_id`, `name`, `part`, `content`)
	SELECT `id`, 'sshpiperd.yaml', 0, `yaml` FROM `ssh_proxy_versions`;--> statement-breakpoint
ALTER TABLE `ssh_proxy_versions` DROP COLUMN `accounts`;--> statement-breakpoint
ALTER TABLE `ssh_proxy_versions` DROP COLUMN `yaml`;