CREATE TABLE "comments" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"post_id" text NOT NULL,
	"parent_id" text,
	"author_name" text NOT NULL,
	"author_email" text,
	"body" text NOT NULL,
	"status" text NOT NULL,
	"held_for" text,
	"by_staff" boolean DEFAULT false NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "comments_enabled" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "comments_mode" text DEFAULT 'moderated' NOT NULL;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "blocked_words" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comments" ADD CONSTRAINT "comments_parent_id_comments_id_fk" FOREIGN KEY ("parent_id") REFERENCES "public"."comments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "comments_post_idx" ON "comments" USING btree ("post_id","status","created_at");--> statement-breakpoint
CREATE INDEX "comments_site_status_idx" ON "comments" USING btree ("site_id","status","created_at");--> statement-breakpoint
CREATE INDEX "comments_site_email_idx" ON "comments" USING btree ("site_id","author_email");--> statement-breakpoint
CREATE INDEX "comments_parent_idx" ON "comments" USING btree ("parent_id");