CREATE TABLE "comment_mail_choices" (
	"user_id" text NOT NULL,
	"site_id" text NOT NULL,
	"enabled" boolean NOT NULL,
	CONSTRAINT "comment_mail_choices_user_id_site_id_pk" PRIMARY KEY("user_id","site_id")
);
--> statement-breakpoint
CREATE TABLE "comment_notices" (
	"post_id" text PRIMARY KEY NOT NULL,
	"site_id" text NOT NULL,
	"sent_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "comment_mail_choices" ADD CONSTRAINT "comment_mail_choices_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comment_mail_choices" ADD CONSTRAINT "comment_mail_choices_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comment_notices" ADD CONSTRAINT "comment_notices_post_id_posts_id_fk" FOREIGN KEY ("post_id") REFERENCES "public"."posts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "comment_notices" ADD CONSTRAINT "comment_notices_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;