-- The signs of a vector's components as a bit string (1 where positive): knowledge search's vector
-- side on PostgreSQL, where the pgvector extension is not assumed, first ranks a site's vectors by
-- the Hamming distance of their signs to the query's (bit_count of the XOR, a few milliseconds for
-- 10,000 vectors), then computes the exact cosine of the closest few in SQL (pg-embeddings.ts):
-- the cosine of every real[] vector in SQL took seconds at 10,000. knowledge_embeddings keeps it
-- in a generated column (the next migration). Custom SQL: drizzle-kit does not describe functions.
CREATE OR REPLACE FUNCTION sign_bits(v real[]) RETURNS varbit
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(CASE WHEN x > 0 THEN '1' ELSE '0' END, '' ORDER BY i), '')::varbit
    FROM unnest(v) WITH ORDINALITY AS t(x, i)
$$;
