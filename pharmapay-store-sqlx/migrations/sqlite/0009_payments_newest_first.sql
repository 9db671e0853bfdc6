-- The payments list opens on the newest active payments, ties broken by id (D8). The date index
-- alone orders by date: payments recorded with a bare date share one instant, so a first page
-- read, joined and sorted every payment of the newest days (at a chain's scale, about 250 rows
-- and their invoices and vendors for ten). Ordered by date and id, a page reads its own rows.
-- A bulk load sets it aside with the other list indexes.
CREATE INDEX IF NOT EXISTS transactions_active_by_date ON transactions (transaction_date, id) WHERE is_active;
