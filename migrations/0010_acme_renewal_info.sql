CREATE TABLE `certificate_renewal_windows` (
	`certificate_id` integer PRIMARY KEY NOT NULL,
	`ari_certificate_id` text NOT NULL,
	`window_start` integer NOT NULL,
	`window_end` integer NOT NULL,
	`renew_at` integer NOT NULL,
	`next_poll_at` integer NOT NULL,
	`explanation_url` text,
	`checked_at` integer NOT NULL,
	FOREIGN KEY (`certificate_id`) REFERENCES `certificates`(`id`) ON UPDATE no action ON DELETE cascade
);
