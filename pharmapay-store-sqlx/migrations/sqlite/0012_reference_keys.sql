-- D48 widens what a payment reference's key leaves out: the key is now the reference in Unicode
-- NFKC, upper-cased, with everything but letters and digits removed (it used to drop spaces,
-- hyphens and slashes only), so `UTR.123`, `UTR_123` and a fullwidth `ＵＴＲ１２３` match
-- `UTR-123`. The rule lives in the core (`PaymentReference::key_of`), so the store recomputes
-- every stored key from its reference in Rust, in this migration's transaction, after this
-- text: there is no schema to change.
SELECT 1;
