-- What instances sharing the database read to know that their cache of API keys may be stale
-- (SQLite's `PRAGMA data_version` plays this part there; src/sites/pg-key-cache.ts polls it).
-- One row whose version moves, in the writer's own transaction, with every change that can
-- alter what a key authenticates as: keys created, revoked or deleted, sites renamed or
-- deleted. Triggers, so that a writer bypassing the service (an admin in psql) is seen too.
-- PostgreSQL only, custom SQL: pg-schema.ts stays the twin of SQLite's schema.
CREATE TABLE "key_changes" (
  "id" boolean PRIMARY KEY DEFAULT true CHECK ("id"),
  "version" bigint NOT NULL
);
--> statement-breakpoint
INSERT INTO "key_changes" ("id", "version") VALUES (true, 0);
--> statement-breakpoint
CREATE FUNCTION "bump_key_changes"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "key_changes" SET "version" = "version" + 1;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "api_keys_key_changes" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_key_changes"();
--> statement-breakpoint
CREATE TRIGGER "sites_key_changes" AFTER UPDATE OF "name" OR DELETE OR TRUNCATE ON "sites"
  FOR EACH STATEMENT EXECUTE FUNCTION "bump_key_changes"();
