CREATE TABLE "newsletter_recipients" (
	"post_id" text NOT NULL,
	"subscriber_id" text NOT NULL,
	"email" text NOT NULL,
	"unsubscribe_token" text NOT NULL,
	"status" text NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp (3) with time zone NOT NULL,
	"claimed_by" text,
	"claimed_until" timestamp (3) with time zone,
	"last_error" text,
	"sent_at" timestamp (3) with time zone,
	CONSTRAINT "newsletter_recipients_post_id_subscriber_id_pk" PRIMARY KEY("post_id","subscriber_id")
);
--> statement-breakpoint
CREATE TABLE "newsletter_sends" (
	"post_id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"status" text NOT NULL,
	"recipients" integer NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"finished_at" timestamp (3) with time zone
);
--> statement-breakpoint
CREATE TABLE "subscribers" (
	"id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"email" text NOT NULL,
	"status" text NOT NULL,
	"consent_source" text NOT NULL,
	"consented_at" timestamp (3) with time zone,
	"unsubscribe_token" text NOT NULL,
	"confirm_token_hash" text,
	"confirm_expires_at" timestamp (3) with time zone,
	"confirm_sent_at" timestamp (3) with time zone,
	"bounces" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"updated_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "posts" ADD COLUMN "send_newsletter" boolean DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "newsletter_enabled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "newsletter_sender_name" text;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "newsletter_reply_to" text;--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "newsletter_footer" text;--> statement-breakpoint
ALTER TABLE "newsletter_recipients" ADD CONSTRAINT "newsletter_recipients_post_id_newsletter_sends_post_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."newsletter_sends"("post_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_recipients" ADD CONSTRAINT "newsletter_recipients_subscriber_id_subscribers_id_fk" FOREIGN KEY ("subscriber_id") REFERENCES "public"."subscribers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_sends" ADD CONSTRAINT "newsletter_sends_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "newsletter_sends" ADD CONSTRAINT "newsletter_sends_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "subscribers" ADD CONSTRAINT "subscribers_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "newsletter_recipients_claim_idx" ON "newsletter_recipients" USING btree ("post_id","status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "newsletter_recipients_subscriber_idx" ON "newsletter_recipients" USING btree ("subscriber_id");--> statement-breakpoint
CREATE INDEX "newsletter_sends_site_idx" ON "newsletter_sends" USING btree ("site_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_site_email_unique" ON "subscribers" USING btree ("site_id","email");--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_unsubscribe_token_unique" ON "subscribers" USING btree ("unsubscribe_token");--> statement-breakpoint
CREATE UNIQUE INDEX "subscribers_confirm_token_unique" ON "subscribers" USING btree ("confirm_token_hash");--> statement-breakpoint
CREATE INDEX "subscribers_site_status_idx" ON "subscribers" USING btree ("site_id","status","created_at");