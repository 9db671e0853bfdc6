//! Bank statements (D46): reading a statement file as Indian banks export it ([`read`]) and
//! what a line says about the payment it was ([`keys`]). Matching lines to payments is a rule
//! over stored records: [`crate::rules::bank`].

pub mod keys;
pub mod read;
