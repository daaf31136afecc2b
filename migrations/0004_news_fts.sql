-- Full-text index of the news articles (title and abstract) for GET /news?q= and GET /search?topics=.
-- drizzle-kit cannot describe virtual tables, so this migration is written by hand. The index is an external-content
-- FTS5 table (it stores only the index, the text stays in `articles`), kept in step by the three triggers below.
-- Porter stemming lets "mining" find "mine" and "mines".
CREATE VIRTUAL TABLE `articles_fts` USING fts5(
	title,
	abstract,
	content = 'articles',
	content_rowid = 'id',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `articles_fts_after_insert` AFTER INSERT ON `articles` BEGIN
	INSERT INTO `articles_fts` (rowid, title, abstract) VALUES (new.id, new.title, new.abstract);
END;
--> statement-breakpoint
CREATE TRIGGER `articles_fts_after_delete` AFTER DELETE ON `articles` BEGIN
	INSERT INTO `articles_fts` (`articles_fts`, rowid, title, abstract) VALUES ('delete', old.id, old.title, old.abstract);
END;
--> statement-breakpoint
CREATE TRIGGER `articles_fts_after_update` AFTER UPDATE OF title, abstract ON `articles` BEGIN
	INSERT INTO `articles_fts` (`articles_fts`, rowid, title, abstract) VALUES ('delete', old.id, old.title, old.abstract);
	INSERT INTO `articles_fts` (rowid, title, abstract) VALUES (new.id, new.title, new.abstract);
END;
--> statement-breakpoint
INSERT INTO `articles_fts` (`articles_fts`) VALUES ('rebuild');
