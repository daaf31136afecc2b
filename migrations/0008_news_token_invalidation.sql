ALTER TABLE `news_users` ADD `token_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Written by hand: pictures stored before only http(s) URLs were accepted (a javascript: or data: URL would run or
-- render in a client). An article loses its thumbnail, as ingestion now drops one; a user gets Gravatar's default
-- identicon (SQLite has no md5 for the per-address one) and can set another.
UPDATE `articles` SET `thumbnail` = NULL
WHERE `thumbnail` IS NOT NULL AND lower(substr(`thumbnail`, 1, 7)) <> 'http://' AND lower(substr(`thumbnail`, 1, 8)) <> 'https://';
--> statement-breakpoint
UPDATE `news_users` SET `picture` = 'https://gravatar.com/avatar/?d=identicon'
WHERE lower(substr(`picture`, 1, 7)) <> 'http://' AND lower(substr(`picture`, 1, 8)) <> 'https://';
