//! The vendor credits (D44) of the random-history model: applying the credit operations, reading
//! back every credit the history made, and the invariants credits keep.

use jiff::SignedDuration;
use rust_decimal::Decimal;

use super::model::{Model, Op, kept, on_picked, outcome, pick, units};
use super::ops::NUMBERS;
use crate::credits::{CreditDecision, CreditKind, CreditQuery, NewCreditApplication, NewVendorCredit, VendorCredit};
use crate::error::Error;
use crate::paging::PageRequest;
use crate::store::Store;

impl<S: Store> Model<S> {
    /// Applies one credit operation and returns its outcome.
    pub(super) async fn apply_credit_op(&mut self, op: &Op) -> String {
        let engine = &self.fx.engine;
        let admin = &self.fx.admin;
        match *op {
            Op::ClaimCredit { vendor, number, cents, days_ago, against } => {
                let Some(vendor_id) = pick(&self.vendors, vendor) else { return "skip".into() };
                let input = NewVendorCredit {
                    vendor_id,
                    branch_id: None,
                    credit_number: NUMBERS[number as usize % NUMBERS.len()].into(),
                    kind: CreditKind::ALL[number as usize % CreditKind::ALL.len()],
                    claimed_amount: units(cents, 2),
                    claim_date: engine.now() - SignedDuration::from_hours(24 * i64::from(days_ago)),
                    against_invoice_id: self.invoices.get(usize::from(against)).copied(),
                    description: None,
                };
                kept(&mut self.credits, engine.create_credit(admin, input, None).await, |credit| credit.id)
            }
            Op::UpdateCredit { credit, vendor, cents } => {
                let (Some(id), Some(vendor_id)) = (pick(&self.credits, credit), pick(&self.vendors, vendor)) else {
                    return "skip".into();
                };
                let Ok(current) = engine.get_credit(admin, id).await else {
                    return outcome(engine.get_credit(admin, id).await);
                };
                let input = NewVendorCredit {
                    vendor_id,
                    branch_id: None,
                    credit_number: current.credit_number,
                    kind: current.kind,
                    claimed_amount: units(cents, 2),
                    claim_date: current.claim_date,
                    against_invoice_id: None,
                    description: Some("replaced".into()),
                };
                outcome(engine.update_credit(admin, id, input).await)
            }
            Op::DecideCredit { credit, permille } => {
                on_picked(&self.credits, credit, async |id| {
                    let current = engine.get_credit(admin, id).await?;
                    let accepted = current.claimed_amount.get() * Decimal::new(i64::from(permille), 3);
                    let decision = CreditDecision {
                        accepted_amount: accepted.round_dp(4),
                        decision_date: engine.now(),
                        distributor_reference: None,
                    };
                    engine.decide_credit(admin, id, decision).await
                })
                .await
            }
            Op::ApplyCredit { credit, cents, shares, first } => {
                let allocations = if cents > 0 { self.shares(cents, shares, first) } else { None };
                let request = NewCreditApplication {
                    amount: (cents > 0).then(|| units(cents, 2)),
                    date: None,
                    allocations: allocations.filter(|allocations| !allocations.is_empty()),
                };
                on_picked(&self.credits, credit, async |id| engine.apply_credit(admin, id, request, None).await).await
            }
            Op::UndoApplication { credit, application } => {
                on_picked(&self.credits, credit, async |id| {
                    let current = engine.get_credit(admin, id).await?;
                    let Some(chosen) =
                        pick(&current.applications.iter().map(|a| a.id).collect::<Vec<_>>(), application)
                    else {
                        return Err(Error::not_found(crate::error::Entity::CreditApplication));
                    };
                    engine.undo_application(admin, id, chosen).await
                })
                .await
            }
            Op::DeleteCredit { credit } => {
                on_picked(&self.credits, credit, async |id| engine.delete_credit(admin, id, None).await).await
            }
            Op::RestoreCredit { credit } => {
                on_picked(&self.credits, credit, async |id| engine.restore_credit(admin, id).await).await
            }
            _ => "skip".into(),
        }
    }

    /// Every credit the history created that is active, with its applications, and the
    /// soft-deleted ones.
    pub(super) async fn all_credits(&self) -> Vec<VendorCredit> {
        let mut credits = Vec::new();
        for id in &self.credits {
            match self.fx.engine.get_credit(&self.fx.admin, *id).await {
                Ok(credit) => credits.push(credit),
                Err(Error::NotFound { .. }) => {
                    let mut query = CreditQuery::default();
                    query.filter.is_active = Some(false);
                    query.page = PageRequest::new(1, 100);
                    let deleted = self.fx.engine.list_credits(&self.fx.admin, &query).await.expect("deleted credits");
                    credits.extend(deleted.items.into_iter().filter(|credit| credit.id == *id));
                }
                Err(other) => panic!("reading a credit failed: {other:?}"),
            }
        }
        credits
    }

    /// D44: the payables dashboard's credit cards, and the credit list's counts by status, against
    /// `credits`.
    pub(super) async fn check_credit_cards(&self, credits: &[VendorCredit]) {
        let cards = self.fx.engine.payables(&self.fx.admin).await.expect("payables").credits;
        let active: Vec<&VendorCredit> = credits.iter().filter(|credit| credit.is_active).collect();
        let with_some = active.iter().filter(|credit| credit.available_amount() > Decimal::ZERO);
        let undecided = active.iter().filter(|credit| credit.accepted_amount.is_none());
        assert_eq!(
            (cards.available_credit.amount, cards.available_credit.credit_count),
            (
                with_some.clone().map(|credit| credit.available_amount()).sum::<Decimal>().normalize(),
                with_some.count() as u64
            ),
            "available credit (D44)"
        );
        assert_eq!(
            (cards.pending_claims.amount, cards.pending_claims.credit_count, cards.pending_claims.oldest_claim_date),
            (
                undecided.clone().map(|credit| credit.claimed_amount.get()).sum::<Decimal>().normalize(),
                undecided.clone().count() as u64,
                undecided.map(|credit| credit.claim_date).min()
            ),
            "pending claims (D44)"
        );
        for status in crate::credits::CreditStatus::ALL {
            let mut query = CreditQuery { page: PageRequest::new(1, 1), ..CreditQuery::default() };
            query.filter.status = Some(status);
            query.filter.is_active = None;
            let listed = self.fx.engine.list_credits(&self.fx.admin, &query).await.expect("credits by status");
            let expected = credits.iter().filter(|credit| credit.status() == status).count() as u64;
            assert_eq!(listed.total_count, expected, "credits of status {}", status.name());
        }
    }
}
