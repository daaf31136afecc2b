ALTER TABLE `job_runs` ADD `heartbeat_at` integer;--> statement-breakpoint
CREATE INDEX `job_runs_state_idx` ON `job_runs` (`state`);