CREATE TABLE `haproxy_agent_syncs` (
	`agent_url` text PRIMARY KEY NOT NULL,
	`version` integer NOT NULL,
	`state` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`error` text,
	`next_retry_at` integer,
	`agent_version` integer,
	`parent_run_id` integer,
	`updated_at` integer NOT NULL
);
