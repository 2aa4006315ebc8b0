-- Lists of posts are newest first, ties broken by rowid: this index holds exactly that order
-- with the columns a status filters on, so a page's rowids come from the index alone (a deep
-- offset skips index entries, not whole rows) and only the page's own rows are then read, as
-- on SQLite. Custom SQL: rowid is not part of pg-schema.ts (see 0002_rowid_columns.sql).
CREATE INDEX "posts_site_list_order_idx" ON "posts" USING btree ("site_id", "created_at" DESC, "rowid" DESC) INCLUDE ("is_draft", "visibility");
