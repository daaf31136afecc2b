ALTER TABLE `haproxy_versions` ADD `problems` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `haproxy_versions` ADD `notes` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
CREATE INDEX `job_runs_kind_started_idx` ON `job_runs` (`kind`,`started_at`);