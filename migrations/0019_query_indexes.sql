DROP INDEX `audit_log_actor_idx`;--> statement-breakpoint
DROP INDEX `audit_log_project_idx`;--> statement-breakpoint
CREATE INDEX `audit_log_actor_id_idx` ON `audit_log` (`actor`,`id`);--> statement-breakpoint
CREATE INDEX `audit_log_project_id_idx` ON `audit_log` (`project_label`,`id`);--> statement-breakpoint
CREATE INDEX `job_runs_kind_id_idx` ON `job_runs` (`kind`,`id`);--> statement-breakpoint
CREATE INDEX `job_runs_kind_state_ended_idx` ON `job_runs` (`kind`,`state`,`ended_at`);--> statement-breakpoint
CREATE INDEX `articles_published_at_id_desc_idx` ON `articles` (`published_at`,"id" desc);--> statement-breakpoint
CREATE INDEX `articles_created_at_idx` ON `articles` (`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `articles_created_at_id_desc_idx` ON `articles` (`created_at`,"id" desc);--> statement-breakpoint
CREATE INDEX `articles_updated_at_idx` ON `articles` (`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `articles_updated_at_id_desc_idx` ON `articles` (`updated_at`,"id" desc);--> statement-breakpoint
CREATE INDEX `articles_title_idx` ON `articles` (`title`,`id`);--> statement-breakpoint
CREATE INDEX `articles_title_id_desc_idx` ON `articles` (`title`,"id" desc);--> statement-breakpoint
CREATE INDEX `articles_source_idx` ON `articles` (`source`,`id`);--> statement-breakpoint
CREATE INDEX `articles_source_id_desc_idx` ON `articles` (`source`,"id" desc);--> statement-breakpoint
CREATE INDEX `news_users_created_at_idx` ON `news_users` (`created_at`,"id" desc);