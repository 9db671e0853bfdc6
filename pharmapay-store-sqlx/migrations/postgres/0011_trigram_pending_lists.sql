-- The trigram indexes of search (migration 4) keep new entries in a pending list, which every
-- search reads whole, until a vacuum or the list's size limit (4 MB by default) moves them into
-- the index. Every payment rewrites its invoice's and its vendor's rows in non-HOT updates (the
-- paid total and the kept figures (D41) are indexed), and each rewrite adds the row's trigrams
-- to that list again. Between vacuums it grew to hundreds of pages, and an invoice search at a
-- chain's scale went from 0.9 ms to 3 ms. The lists are now held to 64 kB (PostgreSQL's least),
-- so a search reads a few pages of them at most and the write that fills one moves a small
-- batch. The lists as they stand are moved into the indexes now.
DO $$
BEGIN
    IF to_regclass('invoices_number_trigrams') IS NOT NULL THEN
        ALTER INDEX invoices_number_trigrams SET (gin_pending_list_limit = 64);
        PERFORM gin_clean_pending_list('invoices_number_trigrams');
    END IF;
    -- A bulk load that stopped half way set the index aside; it is built with the limit.
    UPDATE deferred_schema SET definition = definition || ' WITH (gin_pending_list_limit = 64)'
        WHERE name = 'invoices_number_trigrams' AND definition NOT LIKE '%WITH (%';
    ALTER INDEX vendors_name_trigrams SET (gin_pending_list_limit = 64);
    PERFORM gin_clean_pending_list('vendors_name_trigrams');
END $$;
