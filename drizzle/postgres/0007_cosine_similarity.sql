-- Cosine similarity of two real[] vectors, for knowledge search's vector side where the pgvector
-- extension is not installed (it is not assumed): knowledge_embeddings keeps vectors as real[],
-- and search ranks a site's vectors by this (pg-embeddings.ts). Vectors of different lengths
-- (another model's) are not comparable: NULL. Custom SQL: drizzle-kit does not describe functions.
CREATE OR REPLACE FUNCTION cosine_similarity(a real[], b real[]) RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN cardinality(a) <> cardinality(b) THEN NULL
              ELSE sum(x::float8 * y) / nullif(sqrt(sum(x::float8 * x) * sum(y::float8 * y)), 0) END
    FROM unnest(a, b) AS t(x, y)
$$;
