-- Knowledge search reads the search_vector of every chunk that matches a query (to rank it, term
-- by term). A chunk of about 1,000 characters has a vector of 1 to 2 kB, which with the text
-- makes the row long enough for TOAST to move the vector out of line, where each read costs
-- extra page lookups: kept in the row (MAIN; out of line only for a row that would not fit in a
-- page), ranking a large site's matches takes about half the time. Custom SQL: drizzle-kit
-- does not describe column storage.
ALTER TABLE "knowledge_chunks" ALTER COLUMN "search_vector" SET STORAGE MAIN;
