-- Sites' content versions told to every instance that listens (src/db/pg-content-versions.ts):
-- each change of a site's content_version, by whatever writer, notifies
-- blog_content_version with '<site id> <version>' in the writer's own transaction, so the
-- notification is delivered when, and only if, it commits. Instances keep posts' JSON per
-- version and answer a kept post or page without a round trip while they listen.
-- PostgreSQL only, custom SQL: pg-schema.ts stays the twin of SQLite's schema.
CREATE FUNCTION "notify_content_version"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('blog_content_version', NEW."id" || ' ' || NEW."content_version");
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "sites_content_version_notify" AFTER UPDATE OF "content_version" ON "sites"
  FOR EACH ROW WHEN (OLD."content_version" IS DISTINCT FROM NEW."content_version") EXECUTE FUNCTION "notify_content_version"();
