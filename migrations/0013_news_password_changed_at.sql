ALTER TABLE `news_users` ADD `password_changed_at` integer;--> statement-breakpoint
-- Written by hand: a user whose password changed before this column existed (token version above 0) changed it at
-- some time no later than the row's last update. That time is the safe bound: a token of the original service issued
-- before it is refused, even if the change was in fact earlier.
UPDATE `news_users` SET `password_changed_at` = `updated_at` WHERE `token_version` > 0;
