CREATE TABLE "spam_guard_challenges" (
	"id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "spam_guard_keys" (
	"name" text PRIMARY KEY NOT NULL,
	"secret" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "spam_guard_windows" (
	"key" text PRIMARY KEY NOT NULL,
	"window_start" timestamp (3) with time zone NOT NULL,
	"count" integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX "spam_guard_challenges_expires_idx" ON "spam_guard_challenges" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "spam_guard_windows_start_idx" ON "spam_guard_windows" USING btree ("window_start");