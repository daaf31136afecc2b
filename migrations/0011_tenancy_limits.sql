CREATE TABLE `project_usage` (
	`project_id` integer PRIMARY KEY NOT NULL,
	`backends` integer DEFAULT 0 NOT NULL,
	`containers` integer DEFAULT 0 NOT NULL,
	`domains` integer DEFAULT 0 NOT NULL,
	`public_ca_domains` integer DEFAULT 0 NOT NULL,
	`servers` integer DEFAULT 0 NOT NULL,
	`params_bytes` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `zones` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`reversed_name` text NOT NULL,
	`project_id` integer NOT NULL,
	`version` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `zones_name_unique` ON `zones` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `zones_reversed_name_unique` ON `zones` (`reversed_name`);--> statement-breakpoint
ALTER TABLE `domains` ADD `reversed_name` text;--> statement-breakpoint
CREATE INDEX `domains_reversed_name_idx` ON `domains` (`reversed_name`);--> statement-breakpoint
ALTER TABLE `certificates` ADD `project_ids` text;--> statement-breakpoint
CREATE INDEX `hosts_ipv6_idx` ON `hosts` (`ipv6`);--> statement-breakpoint
-- Hand-written below (drizzle-kit knows no triggers): the reversed names of the domains stored so far, and what each
-- project holds, counted once here and then kept by the triggers that follow. A later migration that rebuilds one of
-- these tables (drizzle's "__new_<table>" copy) drops its triggers and must create them again.
UPDATE `domains` SET `reversed_name` = (
	WITH RECURSIVE `parts` (`rest`, `reversed`) AS (
		SELECT `domains`.`domain_name` || '.', ''
		UNION ALL
		SELECT substr(`rest`, instr(`rest`, '.') + 1),
			substr(`rest`, 1, instr(`rest`, '.') - 1) || CASE WHEN `reversed` = '' THEN '' ELSE '.' || `reversed` END
		FROM `parts` WHERE `rest` <> ''
	)
	SELECT `reversed` FROM `parts` WHERE `rest` = ''
);--> statement-breakpoint
INSERT INTO `project_usage` (`project_id`, `backends`, `containers`, `domains`, `public_ca_domains`, `servers`, `params_bytes`)
SELECT `p`.`id`,
	(SELECT count(*) FROM `backends` `b` WHERE `b`.`project_id` = `p`.`id`),
	(SELECT count(*) FROM `containers` `c` WHERE `c`.`project_id` = `p`.`id`),
	(SELECT count(*) FROM `domains` `d` JOIN `backends` `b` ON `b`.`id` = `d`.`backend_id` WHERE `b`.`project_id` = `p`.`id`),
	(SELECT count(*) FROM `domains` `d` JOIN `backends` `b` ON `b`.`id` = `d`.`backend_id`
		WHERE `b`.`project_id` = `p`.`id` AND `d`.`public_ca_certificate`),
	(SELECT count(*) FROM `backend_containers` `l` JOIN `backends` `b` ON `b`.`id` = `l`.`backend_id` WHERE `b`.`project_id` = `p`.`id`),
	(SELECT coalesce(sum(length(CAST(`b`.`params` AS BLOB))), 0) FROM `backends` `b` WHERE `b`.`project_id` = `p`.`id`)
		+ (SELECT coalesce(sum(length(CAST(`l`.`params` AS BLOB))), 0) FROM `backend_containers` `l`
			JOIN `backends` `b` ON `b`.`id` = `l`.`backend_id` WHERE `b`.`project_id` = `p`.`id`)
FROM `projects` `p`;--> statement-breakpoint
CREATE TRIGGER `project_usage_project_insert` AFTER INSERT ON `projects` BEGIN
	INSERT INTO `project_usage` (`project_id`) VALUES (new.`id`);
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_container_insert` AFTER INSERT ON `containers` BEGIN
	UPDATE `project_usage` SET `containers` = `containers` + 1 WHERE `project_id` = new.`project_id`;
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_container_delete` AFTER DELETE ON `containers` BEGIN
	UPDATE `project_usage` SET `containers` = `containers` - 1 WHERE `project_id` = old.`project_id`;
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_backend_insert` AFTER INSERT ON `backends` BEGIN
	UPDATE `project_usage`
	SET `backends` = `backends` + 1, `params_bytes` = `params_bytes` + coalesce(length(CAST(new.`params` AS BLOB)), 0)
	WHERE `project_id` = new.`project_id`;
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_backend_params` AFTER UPDATE OF `params` ON `backends`
WHEN old.`params` IS NOT new.`params` BEGIN
	UPDATE `project_usage`
	SET `params_bytes` = `params_bytes` - coalesce(length(CAST(old.`params` AS BLOB)), 0)
		+ coalesce(length(CAST(new.`params` AS BLOB)), 0)
	WHERE `project_id` = new.`project_id`;
END;--> statement-breakpoint
-- BEFORE: the cascade then removes the backend's domains and links, whose own triggers no longer find the backend.
CREATE TRIGGER `project_usage_backend_delete` BEFORE DELETE ON `backends` BEGIN
	UPDATE `project_usage`
	SET `backends` = `backends` - 1,
		`domains` = `domains` - (SELECT count(*) FROM `domains` WHERE `backend_id` = old.`id`),
		`public_ca_domains` = `public_ca_domains`
			- (SELECT count(*) FROM `domains` WHERE `backend_id` = old.`id` AND `public_ca_certificate`),
		`servers` = `servers` - (SELECT count(*) FROM `backend_containers` WHERE `backend_id` = old.`id`),
		`params_bytes` = `params_bytes` - coalesce(length(CAST(old.`params` AS BLOB)), 0)
			- (SELECT coalesce(sum(length(CAST(`params` AS BLOB))), 0) FROM `backend_containers` WHERE `backend_id` = old.`id`)
	WHERE `project_id` = old.`project_id`;
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_link_insert` AFTER INSERT ON `backend_containers` BEGIN
	UPDATE `project_usage`
	SET `servers` = `servers` + 1, `params_bytes` = `params_bytes` + coalesce(length(CAST(new.`params` AS BLOB)), 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = new.`backend_id`);
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_link_update` AFTER UPDATE OF `backend_id`, `params` ON `backend_containers`
WHEN old.`backend_id` IS NOT new.`backend_id` OR old.`params` IS NOT new.`params` BEGIN
	UPDATE `project_usage`
	SET `servers` = `servers` - 1, `params_bytes` = `params_bytes` - coalesce(length(CAST(old.`params` AS BLOB)), 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = old.`backend_id`);
	UPDATE `project_usage`
	SET `servers` = `servers` + 1, `params_bytes` = `params_bytes` + coalesce(length(CAST(new.`params` AS BLOB)), 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = new.`backend_id`);
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_link_delete` AFTER DELETE ON `backend_containers` BEGIN
	UPDATE `project_usage`
	SET `servers` = `servers` - 1, `params_bytes` = `params_bytes` - coalesce(length(CAST(old.`params` AS BLOB)), 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = old.`backend_id`);
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_domain_insert` AFTER INSERT ON `domains` BEGIN
	UPDATE `project_usage`
	SET `domains` = `domains` + 1, `public_ca_domains` = `public_ca_domains` + (new.`public_ca_certificate` <> 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = new.`backend_id`);
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_domain_update` AFTER UPDATE OF `backend_id`, `public_ca_certificate` ON `domains`
WHEN old.`backend_id` IS NOT new.`backend_id` OR old.`public_ca_certificate` IS NOT new.`public_ca_certificate` BEGIN
	UPDATE `project_usage`
	SET `domains` = `domains` - 1, `public_ca_domains` = `public_ca_domains` - (old.`public_ca_certificate` <> 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = old.`backend_id`);
	UPDATE `project_usage`
	SET `domains` = `domains` + 1, `public_ca_domains` = `public_ca_domains` + (new.`public_ca_certificate` <> 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = new.`backend_id`);
END;--> statement-breakpoint
CREATE TRIGGER `project_usage_domain_delete` AFTER DELETE ON `domains` BEGIN
	UPDATE `project_usage`
	SET `domains` = `domains` - 1, `public_ca_domains` = `public_ca_domains` - (old.`public_ca_certificate` <> 0)
	WHERE `project_id` = (SELECT `project_id` FROM `backends` WHERE `id` = old.`backend_id`);
END;
