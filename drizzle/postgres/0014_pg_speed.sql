-- What makes the service fast on PostgreSQL (issue 30). PostgreSQL only, custom SQL: pg-schema.ts
-- stays the twin of SQLite's schema.
--
-- 1. Sites' content versions told to every instance that listens (src/db/pg-content-versions.ts):
-- each change of a site's content_version, by whatever writer, notifies blog_content_version with
-- '<site id> <version>' in the writer's own transaction, so the notification is delivered when,
-- and only if, it commits. Instances keep posts' JSON per version and answer a kept post or page
-- without a round trip while they listen.
CREATE FUNCTION "notify_content_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('blog_content_version', NEW."id" || ' ' || NEW."content_version");
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "sites_content_version_notify" AFTER UPDATE OF "content_version" ON "sites"
  FOR EACH ROW WHEN (OLD."content_version" IS DISTINCT FROM NEW."content_version") EXECUTE FUNCTION "notify_content_version"();
--> statement-breakpoint
-- 2. Per site, how many chunks knowledge search ranks over and their summed lengths (distinct
-- words: the tsvector's length), kept by the triggers below in the writer's own transaction, so
-- that a search reads one row instead of counting the site's chunks and averaging their lengths.
CREATE TABLE "knowledge_search_stats" (
  "site_id" text PRIMARY KEY NOT NULL,
  "chunks" bigint NOT NULL,
  "total_length" bigint NOT NULL
);
--> statement-breakpoint
INSERT INTO "knowledge_search_stats" ("site_id", "chunks", "total_length")
  SELECT "site_id", count(*), coalesce(sum(length("search_vector")), 0) FROM "knowledge_chunks" GROUP BY "site_id";
--> statement-breakpoint
CREATE FUNCTION "knowledge_search_stats_moved"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE "knowledge_search_stats" AS stats
       SET "chunks" = stats."chunks" - gone."chunks", "total_length" = stats."total_length" - gone."total_length"
      FROM (SELECT "site_id", count(*) AS "chunks", coalesce(sum(length("search_vector")), 0) AS "total_length" FROM "removed" GROUP BY "site_id") AS gone
     WHERE stats."site_id" = gone."site_id";
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO "knowledge_search_stats" ("site_id", "chunks", "total_length")
      SELECT "site_id", count(*), coalesce(sum(length("search_vector")), 0) FROM "added" GROUP BY "site_id"
      ON CONFLICT ("site_id") DO UPDATE SET "chunks" = "knowledge_search_stats"."chunks" + excluded."chunks",
                                            "total_length" = "knowledge_search_stats"."total_length" + excluded."total_length";
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "knowledge_chunks_stats_insert" AFTER INSERT ON "knowledge_chunks"
  REFERENCING NEW TABLE AS "added" FOR EACH STATEMENT EXECUTE FUNCTION "knowledge_search_stats_moved"();
--> statement-breakpoint
CREATE TRIGGER "knowledge_chunks_stats_update" AFTER UPDATE ON "knowledge_chunks"
  REFERENCING OLD TABLE AS "removed" NEW TABLE AS "added" FOR EACH STATEMENT EXECUTE FUNCTION "knowledge_search_stats_moved"();
--> statement-breakpoint
CREATE TRIGGER "knowledge_chunks_stats_delete" AFTER DELETE ON "knowledge_chunks"
  REFERENCING OLD TABLE AS "removed" FOR EACH STATEMENT EXECUTE FUNCTION "knowledge_search_stats_moved"();
--> statement-breakpoint
CREATE FUNCTION "knowledge_search_stats_emptied"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "knowledge_search_stats";
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "knowledge_chunks_stats_truncate" AFTER TRUNCATE ON "knowledge_chunks"
  FOR EACH STATEMENT EXECUTE FUNCTION "knowledge_search_stats_emptied"();
