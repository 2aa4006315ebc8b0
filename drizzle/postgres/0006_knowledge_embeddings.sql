CREATE TABLE "knowledge_embeddings" (
	"chunk_id" bigint NOT NULL,
	"site_id" text NOT NULL,
	"model" text NOT NULL,
	"vector" real[] NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "knowledge_embeddings_chunk_id_pk" PRIMARY KEY("chunk_id")
);
--> statement-breakpoint
ALTER TABLE "knowledge_embeddings" ADD CONSTRAINT "knowledge_embeddings_chunk_id_knowledge_chunks_id_fk" FOREIGN KEY ("chunk_id") REFERENCES "public"."knowledge_chunks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "knowledge_embeddings_site_model_idx" ON "knowledge_embeddings" USING btree ("site_id","model");