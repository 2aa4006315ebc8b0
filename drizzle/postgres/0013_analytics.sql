CREATE TABLE "analytics_days" (
	"site_id" text NOT NULL,
	"day" text NOT NULL,
	"views" integer DEFAULT 0 NOT NULL,
	"visitors" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "analytics_days_site_id_day_pk" PRIMARY KEY("site_id","day")
);
--> statement-breakpoint
CREATE TABLE "analytics_pages" (
	"site_id" text NOT NULL,
	"day" text NOT NULL,
	"page" text NOT NULL,
	"views" integer DEFAULT 0 NOT NULL,
	"visitors" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "analytics_pages_site_id_day_page_pk" PRIMARY KEY("site_id","day","page")
);
--> statement-breakpoint
CREATE TABLE "analytics_referrers" (
	"site_id" text NOT NULL,
	"day" text NOT NULL,
	"referrer" text NOT NULL,
	"views" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "analytics_referrers_site_id_day_referrer_pk" PRIMARY KEY("site_id","day","referrer")
);
--> statement-breakpoint
CREATE TABLE "analytics_salts" (
	"day" text PRIMARY KEY NOT NULL,
	"salt" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analytics_visitors" (
	"site_id" text NOT NULL,
	"day" text NOT NULL,
	"page" text NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "analytics_visitors_site_id_day_page_hash_pk" PRIMARY KEY("site_id","day","page","hash")
);
--> statement-breakpoint
ALTER TABLE "sites" ADD COLUMN "time_zone" text DEFAULT 'UTC' NOT NULL;--> statement-breakpoint
ALTER TABLE "analytics_days" ADD CONSTRAINT "analytics_days_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_pages" ADD CONSTRAINT "analytics_pages_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_referrers" ADD CONSTRAINT "analytics_referrers_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "analytics_visitors" ADD CONSTRAINT "analytics_visitors_site_id_sites_id_fk" FOREIGN KEY ("site_id") REFERENCES "public"."sites"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "analytics_days_day_idx" ON "analytics_days" USING btree ("day");--> statement-breakpoint
CREATE INDEX "analytics_pages_day_idx" ON "analytics_pages" USING btree ("day");--> statement-breakpoint
CREATE INDEX "analytics_referrers_day_idx" ON "analytics_referrers" USING btree ("day");--> statement-breakpoint
CREATE INDEX "analytics_visitors_day_idx" ON "analytics_visitors" USING btree ("day");