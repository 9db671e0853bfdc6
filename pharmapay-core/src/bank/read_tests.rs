use jiff::civil::date as day;
use proptest::prelude::*;
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook};

use super::*;

fn text(value: &str) -> Cell {
    Cell::Text(value.to_owned())
}

fn read_with(body: &str, options: &ReadOptions) -> Result<ReadStatement, StatementError> {
    read_statement(&ImportFile::csv(body), options)
}

fn read(body: &str) -> ReadStatement {
    read_with(body, &ReadOptions::default()).unwrap()
}

fn amount(value: &str) -> Amount {
    Amount::parse(value).unwrap()
}

/// The lines as (row, date, amount) for compact comparisons.
fn brief(statement: &ReadStatement) -> Vec<(u32, Date, Amount)> {
    statement.lines.iter().map(|line| (line.row, line.date, line.amount)).collect()
}

fn file_error(result: Result<ReadStatement, StatementError>) -> String {
    match result {
        Err(StatementError::File(message)) => message,
        other => panic!("expected a file error, got {other:?}"),
    }
}

#[test]
fn headers_match_by_letters_and_digits() {
    assert_eq!(bank_header_key("Chq./Ref.No."), "chqrefno");
    assert_eq!(bank_header_key("Chq/Ref No"), "chqrefno");
    assert_eq!(bank_header_key("Withdrawal Amount (INR )"), "withdrawalamountinr");
    assert_eq!(bank_header_key(" Ref No./Cheque No. "), "refnochequeno");
    assert_eq!(bank_header_key("TXN_DATE"), "txndate");
    assert_eq!(bank_header_key("Value\u{a0}Date"), "valuedate");
    assert_eq!(bank_header_key("--"), "");
}

#[test]
fn date_orders_parse_their_names() {
    assert_eq!(DateOrder::default(), DateOrder::Dmy);
    assert_eq!(DateOrder::parse("dmy"), Some(DateOrder::Dmy));
    assert_eq!(DateOrder::parse("MDY"), Some(DateOrder::Mdy));
    assert_eq!(DateOrder::parse(" Ymd "), Some(DateOrder::Ymd));
    assert_eq!(DateOrder::parse("DDMMYYYY"), None);
    assert_eq!(DateOrder::parse(""), None);
    for name in DateOrder::NAMES {
        assert_eq!(DateOrder::parse(name).map(DateOrder::name), Some(name));
    }
}

#[test]
fn text_dates_read_in_the_shapes_banks_write() {
    let fifth_april = day(2026, 4, 5);
    let shapes = [
        "05/04/2026",
        "5/4/2026",
        "05-04-26",
        "05/04/26",
        "05.04.2026",
        "05 Apr 2026",
        "05-Apr-2026",
        "05-APR-26",
        "5 April 2026",
        "5 april 26",
        "Apr 05, 2026",
        "April 5 2026",
        "2026-04-05",
        "2026/04/05",
        "2026-Apr-05",
        "05/04/2026 10:23:45",
        "05/04/2026 10:23 AM",
        "05-Apr-2026 23:59",
        "2026-04-05T10:23:45",
        "2026-04-05T10:23:45+05:30",
        "2026-04-05 10:23:45.123",
        " 05/04/2026 ",
    ];
    for shape in shapes {
        assert_eq!(read_date(&text(shape), DateOrder::Dmy), Some(fifth_april), "{shape}");
    }
    assert_eq!(read_date(&text("5 Sept 2026"), DateOrder::Dmy), Some(day(2026, 9, 5)));
    assert_eq!(read_date(&text("29/02/2024"), DateOrder::Dmy), Some(day(2024, 2, 29)));
}

#[test]
fn numeric_dates_follow_the_order_unless_the_year_comes_first() {
    assert_eq!(read_date(&text("04/05/2026"), DateOrder::Mdy), Some(day(2026, 4, 5)));
    assert_eq!(read_date(&text("04-05-26"), DateOrder::Mdy), Some(day(2026, 4, 5)));
    assert_eq!(read_date(&text("26/04/05"), DateOrder::Ymd), Some(day(2026, 4, 5)));
    assert_eq!(read_date(&text("2026/04/05"), DateOrder::Ymd), Some(day(2026, 4, 5)));
    for order in [DateOrder::Dmy, DateOrder::Mdy, DateOrder::Ymd] {
        assert_eq!(read_date(&text("2026-04-05"), order), Some(day(2026, 4, 5)), "{order:?}");
        assert_eq!(read_date(&text("05 Apr 2026"), order), Some(day(2026, 4, 5)), "{order:?}");
    }
    // Day first, 13 is no month.
    assert_eq!(read_date(&text("13/04/2026"), DateOrder::Mdy), None);
    assert_eq!(read_date(&text("04/13/2026"), DateOrder::Dmy), None);
}

#[test]
fn cells_that_name_no_day_are_none() {
    let none = [
        "31/02/2026",
        "29/02/2025",
        "00/04/2026",
        "05/00/2026",
        "05/04/1899",
        "05/04/0000",
        "05/04/202",
        "005/04/2026",
        "05/04",
        "2026-04",
        "Opening Balance",
        "** END OF STATEMENT **",
        "STATEMENT SUMMARY  :-",
        "Statement From : 01/04/2026 To : 30/04/2026",
        "2,00,000.00",
        "12.50",
        "1,23,456",
        "05 Foo 2026",
        "Apr May 2026",
        "05/04/2026 closing",
        "05/04/2026abc",
        "-",
        "",
        "१२/०४/२०२६",
    ];
    for input in none {
        assert_eq!(read_date(&text(input), DateOrder::Dmy), None, "{input}");
    }
    assert_eq!(read_date(&text(&"1".repeat(100)), DateOrder::Dmy), None);
    assert_eq!(read_date(&Cell::Number(46_117.0), DateOrder::Dmy), None);
    assert_eq!(read_date(&Cell::Bool(true), DateOrder::Dmy), None);
    assert_eq!(read_date(&Cell::Empty, DateOrder::Dmy), None);
}

#[test]
fn xlsx_date_times_give_their_day() {
    let cell = Cell::DateTime(day(2026, 4, 5).at(10, 23, 45, 0));
    assert_eq!(read_date(&cell, DateOrder::Mdy), Some(day(2026, 4, 5)));
    assert_eq!(read_date(&Cell::DateTime(day(1899, 12, 30).at(0, 0, 0, 0)), DateOrder::Dmy), None);
}

const HDFC: &str = "\
,,,,,,
HDFC BANK Ltd.,,,,,,
MEDPLUS PHARMACY,,,,,,
Account No :,50100012345678,,,,,
Statement From : 01/04/2026 To : 30/04/2026,,,,,,
,,,,,,
Date,Narration,Chq./Ref.No.,Value Dt,Withdrawal Amt.,Deposit Amt.,Closing Balance
05/04/26,UPI-MEDPLUS DISTRIB-medplus@okhdfcbank-HDFC0000123-412345678901-PAYMENT,0000412345678901,05/04/26,\"12,500.00\",,\"1,87,500.00\"
06/04/26,NEFT CR-SBIN0001234-APOLLO CLINIC-INV 88,N123456789012345,06/04/26,,\"4,000.00\",\"1,91,500.00\"
07/04/26,CHQ PAID-MICR CTS-CALCUTTA PHARMA,000123,07/04/26,\"8,250.50\",,\"1,83,249.50\"
08/04/26,REVERSAL ENTRY,0000000000000000,08/04/26,0.00,0.00,\"1,83,249.50\"
,,,,,,
STATEMENT SUMMARY  :-,,,,,,
Opening Balance,Dr Count,Cr Count,Debits,Credits,Closing Bal,
\"2,00,000.00\",2,1,\"20,750.50\",\"4,000.00\",\"1,83,249.50\",
  ** END OF STATEMENT **,,,,,,
";

#[test]
fn an_hdfc_statement_gives_its_withdrawals() {
    let statement = read(HDFC);
    assert_eq!(
        statement.lines,
        vec![
            StatementLine {
                row: 8,
                date: day(2026, 4, 5),
                narration: Some("UPI-MEDPLUS DISTRIB-medplus@okhdfcbank-HDFC0000123-412345678901-PAYMENT".into()),
                reference: Some("0000412345678901".into()),
                amount: amount("12500"),
            },
            StatementLine {
                row: 10,
                date: day(2026, 4, 7),
                narration: Some("CHQ PAID-MICR CTS-CALCUTTA PHARMA".into()),
                reference: Some("000123".into()),
                amount: amount("8250.5"),
            },
        ]
    );
    assert_eq!(statement.deposit_lines, 1);
    // The zero row and the four summary rows.
    assert_eq!(statement.skipped_rows, 5);
}

#[test]
fn an_sbi_statement_reads_spelled_out_dates_and_padded_references() {
    let body = "\
Account Name       :,MEDPLUS PHARMACY
Account Number     :,00000012345678901
Branch             :,FICTIONAL NAGAR
Date               :,30 Apr 2026

Txn Date,Value Date,Description,Ref No./Cheque No.,Debit,Credit,Balance
5 Apr 2026,5 Apr 2026,TO TRANSFER-UPI/DR/412345678901/SUN PHARMA/SBIN/sunpharma@sbi/Payment-,0000412345678901,\"25,000.00\", ,\"1,75,000.00\"
6 Apr 2026,6 Apr 2026,BY TRANSFER-NEFT*HDFC0000001*N096260012345*CITY HOSPITAL--,TRANSFER FROM 3199412345678, ,\"10,000.00\",\"1,85,000.00\"
7 Apr 2026,7 Apr 2026,ATM WDL-ATM CASH 1234 MG ROAD,-,\"2,000.00\", ,\"1,83,000.00\"
**This is a computer generated statement and does not require a signature.
";
    let statement = read(body);
    assert_eq!(brief(&statement), vec![(7, day(2026, 4, 5), amount("25000")), (9, day(2026, 4, 7), amount("2000"))]);
    assert_eq!(statement.lines[0].reference.as_deref(), Some("0000412345678901"));
    assert_eq!(statement.lines[1].reference, None);
    assert_eq!(statement.lines[1].narration.as_deref(), Some("ATM WDL-ATM CASH 1234 MG ROAD"));
    assert_eq!((statement.deposit_lines, statement.skipped_rows), (1, 1));
}

#[test]
fn an_icici_statement_uses_the_transaction_date_over_the_value_date() {
    let body = "\
DETAILED STATEMENT,,,,,,,
Transactions List - MEDPLUS PHARMACY (INR) - 000401234567,,,,,,,
S No.,Value Date,Transaction Date,Cheque Number,Transaction Remarks,Withdrawal Amount (INR ),Deposit Amount (INR ),Balance (INR )
1,04/04/2026,05/04/2026,-,NEFT-ICICN12345-GLOBAL MEDI DISTRIBUTORS,15000.00,0.00,85000.00
2,06/04/2026,06/04/2026,,MMT/IMPS/612345678901/Refund,0.00,250.00,85250.00
3,07/04/2026,07/04/2026,004521,CHEQUE 004521 CIPLA STOCKIST,3200.75,0.00,82049.25
,,,,Legends Used in Account Statement,,,
";
    let statement = read(body);
    assert_eq!(brief(&statement), vec![(4, day(2026, 4, 5), amount("15000")), (6, day(2026, 4, 7), amount("3200.75"))]);
    assert_eq!(statement.lines[0].reference, None);
    assert_eq!(statement.lines[1].reference.as_deref(), Some("004521"));
    assert_eq!(statement.lines[1].narration.as_deref(), Some("CHEQUE 004521 CIPLA STOCKIST"));
    assert_eq!((statement.deposit_lines, statement.skipped_rows), (1, 1));
}

#[test]
fn a_signed_amount_is_money_out_when_negative_or_marked_dr() {
    let body = "\
Date,Description,UTR,Amount,Balance
2026-04-05,NEFT to ALKEM STOCKIST,UTR0001,-5000.00,95000.00
2026-04-06,Receipt from clinic,, 2000.00,97000.00
2026-04-07,Nothing moved,,0,97000.00
2026-04-08,RTGS to ZYDUS AGENCY,UTR0002,\"1,200.00 Dr\",95800.00
2026-04-09,Refund,,300.00Cr,96100.00
2026-04-10,Charges,,(750.25),95349.75
2026-04-11,Empty amount,,,95349.75
Closing Balance,,,,95349.75
";
    let statement = read(body);
    assert_eq!(
        brief(&statement),
        vec![
            (2, day(2026, 4, 5), amount("5000")),
            (5, day(2026, 4, 8), amount("1200")),
            (7, day(2026, 4, 10), amount("750.25")),
        ]
    );
    assert_eq!(statement.lines[0].reference.as_deref(), Some("UTR0001"));
    assert_eq!((statement.deposit_lines, statement.skipped_rows), (2, 3));
}

#[test]
fn an_unsigned_amount_takes_its_direction_from_a_dr_cr_column() {
    let body = "\
Sl. No.,Transaction Date,Value Date,Description,Chq / Ref No.,Amount,Dr / Cr,Balance,Dr / Cr
1,05-04-2026,05-04-2026,UPI/LUPIN AGENCIES/412345678901,UPI-412345678901,\"5,000.00\",DR,\"95,000.00\",CR
2,06-04-2026,06-04-2026,IMPS FROM CLINIC,IMPS-612345678901,\"1,000.00\",CR,\"96,000.00\",CR
3,07-04-2026,07-04-2026,ODD ROW,,\"1,000.00\",XX,\"96,000.00\",CR
";
    let error = read_with(body, &ReadOptions::default()).unwrap_err();
    let StatementError::Rows(errors) = error else { panic!("expected row errors, got {error:?}") };
    assert_eq!(errors.errors().iter().map(|(key, _)| key).collect::<Vec<_>>(), ["row4.amount"]);
    let statement = read(&body.replace("XX", "Dr"));
    assert_eq!(brief(&statement), vec![(2, day(2026, 4, 5), amount("5000")), (4, day(2026, 4, 7), amount("1000"))]);
    assert_eq!(statement.lines[0].reference.as_deref(), Some("UPI-412345678901"));
    assert_eq!(statement.deposit_lines, 1);
}

fn workbook() -> Vec<u8> {
    let mut workbook = Workbook::new();
    let sheet = workbook.add_worksheet();
    let stamp = Format::new().set_num_format("dd/mm/yyyy hh:mm");
    sheet.write_string(0, 0, "Statement of account 000401234567").unwrap();
    for (column, header) in ["Txn Date", "Value Date", "Particulars", "UTR", "Debit", "Credit"].into_iter().enumerate()
    {
        sheet.write_string(2, column as u16, header).unwrap();
    }
    let moment = ExcelDateTime::from_ymd(2026, 4, 5).unwrap().and_hms(10, 23, 45).unwrap();
    sheet.write_datetime_with_format(3, 0, moment, &stamp).unwrap();
    sheet.write_string(3, 1, "06/04/2026").unwrap();
    sheet.write_string(3, 2, "NEFT-MANKIND DISTRIBUTORS").unwrap();
    sheet.write_number(3, 3, 412_345_678_901.0).unwrap();
    sheet.write_number(3, 4, 1234.5).unwrap();
    sheet.write_string(4, 0, "06/04/2026").unwrap();
    sheet.write_string(4, 2, "CASH DEPOSIT").unwrap();
    sheet.write_number(4, 5, 5000.0).unwrap();
    sheet.write_string(5, 0, "07-Apr-2026").unwrap();
    sheet.write_string(5, 4, "₹ 1,00,000").unwrap();
    sheet.write_string(7, 0, "Total").unwrap();
    sheet.write_number(7, 4, 101_234.5).unwrap();
    workbook.save_to_buffer().unwrap()
}

#[test]
fn an_xlsx_statement_reads_dates_numbers_and_text() {
    let statement = read_statement(&ImportFile::xlsx(workbook()), &ReadOptions::default()).unwrap();
    assert_eq!(brief(&statement), vec![(4, day(2026, 4, 5), amount("1234.5")), (6, day(2026, 4, 7), amount("100000"))]);
    assert_eq!(statement.lines[0].reference.as_deref(), Some("412345678901"));
    assert_eq!(statement.lines[0].narration.as_deref(), Some("NEFT-MANKIND DISTRIBUTORS"));
    assert_eq!(statement.lines[1].reference, None);
    assert_eq!((statement.deposit_lines, statement.skipped_rows), (1, 1));
}

#[test]
fn the_earliest_header_of_its_list_wins() {
    let body = "\
Value Date,Txn Date,Remarks,Particulars,Credit Amount,Debit Amount,Withdrawal
05/04/2026,06/04/2026,second,first,,10,20
";
    let statement = read(body);
    let line = &statement.lines[0];
    assert_eq!((line.date, line.narration.as_deref(), line.amount), (day(2026, 4, 6), Some("first"), amount("20")));
}

const PLAIN: &str = "\
Posted On,Details,Cheque,Paid Out,Paid In,Net
2026-04-05,Rent,101,9000,,-9000
2026-04-06,Sales,,,4000,4000
";

#[test]
fn named_columns_replace_the_recognised_ones() {
    let message = file_error(read_with(PLAIN, &ReadOptions::default()));
    assert!(message.contains("first 30") && message.contains("dateColumn and debitColumn"), "{message}");
    let options = ReadOptions {
        date_column: Some("posted on".into()),
        narration_column: Some("DETAILS".into()),
        reference_column: Some("Cheque".into()),
        debit_column: Some("paid-out".into()),
        ..ReadOptions::default()
    };
    let statement = read_with(PLAIN, &options).unwrap();
    let line = &statement.lines[0];
    assert_eq!((line.row, line.narration.as_deref(), line.reference.as_deref()), (2, Some("Rent"), Some("101")));
    assert_eq!(line.amount, amount("9000"));
    // No credit parameter: money in under an unrecognised header is no deposit.
    assert_eq!((statement.deposit_lines, statement.skipped_rows), (0, 1));
    let signed = ReadOptions { debit_column: None, amount_column: Some("Net".into()), ..options.clone() };
    let statement = read_with(PLAIN, &signed).unwrap();
    assert_eq!((statement.lines.len(), statement.deposit_lines), (1, 1));
}

#[test]
fn a_named_column_the_file_lacks_means_no_header() {
    let options = ReadOptions { debit_column: Some("Paid Out".into()), ..ReadOptions::default() };
    let message = file_error(read_with(HDFC, &options));
    assert!(message.contains("debitColumn `Paid Out`"), "{message}");
    let blank = ReadOptions { narration_column: Some("--".into()), ..ReadOptions::default() };
    assert!(matches!(read_with(HDFC, &blank), Err(StatementError::File(_))));
    // A named amount column wins over the recognised debit columns.
    let signed = ReadOptions { amount_column: Some("Closing Balance".into()), ..ReadOptions::default() };
    let statement = read_with(HDFC, &signed).unwrap();
    assert_eq!((statement.lines.len(), statement.deposit_lines), (0, 4));
}

#[test]
fn date_orders_apply_to_the_rows() {
    let body = "Date,Debit\n04/05/2026,10\n12/31/2026,20\n";
    let options = ReadOptions { date_order: DateOrder::Mdy, ..ReadOptions::default() };
    let statement = read_with(body, &options).unwrap();
    assert_eq!(brief(&statement), vec![(2, day(2026, 4, 5), amount("10")), (3, day(2026, 12, 31), amount("20"))]);
    // Day first, the second row has no date.
    let statement = read(body);
    assert_eq!((brief(&statement), statement.skipped_rows), (vec![(2, day(2026, 5, 4), amount("10"))], 1));
    let options = ReadOptions { date_order: DateOrder::Ymd, ..ReadOptions::default() };
    let statement = read_with("Date,Debit\n26.04.05,10\n", &options).unwrap();
    assert_eq!(brief(&statement), vec![(2, day(2026, 4, 5), amount("10"))]);
}

#[test]
fn the_header_must_be_among_the_first_30_rows() {
    let preamble = |rows: usize| "Statement of account\n".repeat(rows);
    let statement = read(&format!("{}Date,Debit\n05/04/2026,10\n", preamble(29)));
    assert_eq!(brief(&statement), vec![(31, day(2026, 4, 5), amount("10"))]);
    let message =
        file_error(read_with(&format!("{}Date,Debit\n05/04/2026,10\n", preamble(30)), &ReadOptions::default()));
    assert!(message.starts_with("no row among the first 30 names a date column and a debit or amount column"));
    // A date column alone, or money alone, is no header.
    assert!(matches!(
        read_with("Date,Narration\n05/04/2026,x\n", &ReadOptions::default()),
        Err(StatementError::File(_))
    ));
    assert!(matches!(read_with("Narration,Debit\nx,10\n", &ReadOptions::default()), Err(StatementError::File(_))));
    assert!(matches!(read_with("", &ReadOptions::default()), Err(StatementError::File(_))));
}

#[test]
fn unreadable_amounts_are_row_errors() {
    let body = "\
Date,Narration,Debit,Credit
05/04/2026,bad grouping,\"12,34\",
06/04/2026,too precise,1.23456,
07/04/2026,bad credit,,abc
08/04/2026,good,10,
Total,,\"not a number\",
";
    let error = read_with(body, &ReadOptions::default()).unwrap_err();
    let StatementError::Rows(errors) = error else { panic!("expected row errors, got {error:?}") };
    assert_eq!(errors.failed_rows(), 3);
    let found: Vec<(String, Vec<String>)> =
        errors.errors().iter().map(|(key, messages)| (key.to_owned(), messages.to_vec())).collect();
    assert_eq!(
        found,
        vec![
            ("row2.amount".to_owned(), vec!["must be a number such as 1,23,456.50 (column Debit)".to_owned()]),
            ("row3.amount".to_owned(), vec!["must have at most 4 decimal places (column Debit)".to_owned()]),
            ("row4.amount".to_owned(), vec!["must be a number such as 1,23,456.50 (column Credit)".to_owned()]),
        ]
    );
    let huge = read_with("Date,Debit\n05/04/2026,1000000000000\n", &ReadOptions::default());
    assert!(matches!(huge, Err(StatementError::Rows(errors)) if errors.has_row(2)));
}

#[test]
fn a_header_without_rows_reads_as_nothing() {
    assert_eq!(read("Date,Narration,Debit,Credit\n"), ReadStatement::default());
    let footer_only = read("Date,Narration,Debit,Credit\n,,,\n** END OF STATEMENT **,,,\n");
    assert_eq!((footer_only.lines.len(), footer_only.deposit_lines, footer_only.skipped_rows), (0, 0, 1));
}

#[test]
fn too_many_rows_are_refused() {
    let mut body = String::from("Date,Debit\n");
    body.push_str(&"05/04/2026,1\n".repeat(MAX_ROWS + 1));
    assert_eq!(read_with(&body, &ReadOptions::default()), Err(StatementError::TooManyRows));
}

#[test]
fn unreadable_files_are_file_errors() {
    let garbage = read_statement(&ImportFile::xlsx(b"not a workbook".to_vec()), &ReadOptions::default());
    assert!(matches!(garbage, Err(StatementError::File(message)) if message.contains("xlsx")));
    let utf16 = read_statement(&ImportFile::csv(vec![0xFF, 0xFE, b'D', 0]), &ReadOptions::default());
    assert!(matches!(utf16, Err(StatementError::File(message)) if message.contains("UTF-16")));
}

#[test]
fn money_cells_read_markers_dashes_and_zeros() {
    let value = |cell: Cell| signed_amount(&cell).map(|value| value.map(|value| value.to_string()));
    assert_eq!(value(text("1,200.00 Dr")), Ok(Some("-1200".into())));
    assert_eq!(value(text("-1,200.00 cr")), Ok(Some("1200".into())));
    assert_eq!(value(text("₹ 500DR")), Ok(Some("-500".into())));
    assert_eq!(value(text("(75.5)")), Ok(Some("-75.5".into())));
    assert_eq!(value(text("(75.5) Cr")), Ok(Some("75.5".into())));
    assert_eq!(value(Cell::Number(-42.25)), Ok(Some("-42.25".into())));
    for empty in [text("-"), text(" -- "), text("0.00"), text("-0"), Cell::Number(0.0), Cell::Empty] {
        assert_eq!(value(empty.clone()), Ok(None), "{empty:?}");
    }
    for refused in [text("Dr"), text("12 Drx"), text("5 Rs Dr"), text("(5"), text("()"), Cell::Bool(true)] {
        assert!(value(refused.clone()).is_err(), "{refused:?}");
    }
}

proptest! {
    #[test]
    fn no_text_makes_the_date_reader_panic(input in "\\PC{0,40}", order in 0usize..3) {
        let order = [DateOrder::Dmy, DateOrder::Mdy, DateOrder::Ymd][order];
        let _ = read_date(&Cell::Text(input.clone()), order);
        let _ = signed_amount(&Cell::Text(input));
    }

    #[test]
    fn no_csv_makes_the_reader_panic(rows in proptest::collection::vec("[0-9A-Za-z /,.()-]{0,30}", 0..8)) {
        let body = format!("Date,Narration,Reference,Debit,Credit,Amount,Dr/Cr\n{}", rows.join("\n"));
        let _ = read_with(&body, &ReadOptions::default());
    }
}

#[test]
fn narrations_and_references_keep_no_control_characters_and_a_bounded_length() {
    let long = "N".repeat(TEXT_MAX + 50);
    let body =
        format!("Date,Narration,Ref No,Debit\n05/04/2026,\"UPI\u{0}PAY\nTO X\",\u{7}\u{7},10\n06/04/2026,{long},R,5\n");
    let statement = read(&body);
    assert_eq!(statement.lines[0].narration.as_deref(), Some("UPI PAY TO X"));
    assert_eq!(statement.lines[0].reference, None, "nothing but control characters is nothing");
    assert_eq!(statement.lines[1].narration.as_ref().map(|text| text.chars().count()), Some(TEXT_MAX));
}

#[test]
fn a_header_row_over_64_kib_of_text_is_a_file_error() {
    // Each cell is within the 64 KiB a cell may hold; together they pass what a header may.
    let wide = |size: usize| "x".repeat(size);
    let body = format!("Account statement\nDate,Debit,{},{}\n05/04/2026,100,,\n", wide(40_000), wide(30_000));
    assert_eq!(file_error(read_with(&body, &ReadOptions::default())), "the header row holds more than 64 KiB of text");
    // A preamble row that big is no header and is skipped like any other.
    let body = format!("{},{}\nDate,Debit\n05/04/2026,100\n", wide(40_000), wide(30_000));
    assert_eq!(brief(&read(&body)), vec![(3, day(2026, 4, 5), amount("100"))]);
}
