-- Chinese, Japanese and Thai text is now indexed word by word: the chunker writes an invisible
-- U+200B between the words Intl.Segmenter finds, so FTS5's unicode61 tokenizer sees words
-- instead of whole runs (before, `原子力発電所` could not match inside `福島第一原子力発電所`).
-- SQL cannot segment the chunks indexed before, so their files go back to `uploaded`: the
-- indexer resumes `uploaded` files at start-up and indexes them again from the stored file.
UPDATE `knowledge_files` SET `status` = 'uploaded'
WHERE `status` = 'indexed' AND `id` IN (
	SELECT DISTINCT `file_id` FROM `knowledge_chunks`
	WHERE `text` GLOB '*[぀-ヿ㐀-䶿一-鿿豈-﫿ก-๿຀-໿က-႟ក-៿𠀀-𲎯]*' AND instr(`text`, char(8203)) = 0
);
