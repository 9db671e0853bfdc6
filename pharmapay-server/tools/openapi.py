#!/usr/bin/env python3
"""Writes pharmapay-server/openapi.json, the OpenAPI 3.1 description of the API.

Edit this script rather than the JSON, then run
    python3 pharmapay-server/tools/openapi.py pharmapay-server/openapi.json
CI regenerates the document and fails when it differs from the committed one.
"""
import json, sys, copy

I64_MAX = 9223372036854775807
MAX_AMOUNT = 999999999999.9999

# ---- text rules of pharmapay-core/src/text.rs as patterns ------------------------------
CC = r"\u0000-\u001F\u007F-\u009F"                          # Rust char::is_control
# Rust char::is_whitespace (what str::trim removes): the Unicode White_Space set, exactly.
WSR = r"\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000"
WS = rf"[{WSR}]"
NWS = rf"[^{WSR}]"
EDGE = rf"[^{WSR}{CC}]"                                        # first/last char after trimming
MID1 = rf"[^{CC}]"                                          # single-line inner char
MIDN = r"[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]"  # multi-line inner char (tab, CR, LF allowed)

def core(mid, n):
    return rf"{EDGE}(?:{mid}{{0,{n - 2}}}{EDGE})?"

def req_single(n):
    return rf"^{WS}*{core(MID1, n)}{WS}*$"

def opt_single(n):
    return rf"^{WS}*(?:{core(MID1, n)})?{WS}*$"

def opt_multi(n):
    return rf"^{WS}*(?:{core(MIDN, n)})?{WS}*$"

EMAIL_CHAR = rf"[^{WSR}@{CC}]"
EMAIL_CORE = rf"(?={NWS}{{1,254}}{WS}*$){EMAIL_CHAR}+@(?!\.){EMAIL_CHAR}+(?<!\.)"
EMAIL_REQ = rf"^{WS}*{EMAIL_CORE}{WS}*$"
EMAIL_OPT = rf"^{WS}*(?:{EMAIL_CORE})?{WS}*$"

def choice(values):
    """Case-insensitive (ASCII) match of one of `values`, surrounding whitespace trimmed, as the server parses it."""
    def ci(word):
        return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in word)
    return rf"^{WS}*(?:{'|'.join(ci(v) for v in values)}){WS}*$"

def choice_schema(values):
    return {"type": "string", "pattern": choice(values), "examples": list(values)}

TRIM_NOTE = ("Surrounding whitespace is trimmed first; the rest may not contain control characters")

def name_field(desc, n=200):
    return {"type": "string", "pattern": req_single(n),
            "description": f"{desc} Required, not blank, at most {n} characters. {TRIM_NOTE}."}

def opt_code(desc, n=100):
    return {"type": ["string", "null"], "pattern": opt_single(n),
            "description": f"{desc} Optional; blank or null means none. At most {n} characters, single line. {TRIM_NOTE}."}

def opt_text(desc, n=2000):
    return {"type": ["string", "null"], "pattern": opt_multi(n),
            "description": f"{desc} Optional; blank or null means none. At most {n} characters; line breaks and tabs are allowed, other control characters are not. Surrounding whitespace is trimmed."}

def email_req(desc):
    return {"type": "string", "pattern": EMAIL_REQ,
            "description": f"{desc} Shaped like `local@domain` (D29): exactly one `@`, no whitespace or control characters, the domain neither starts nor ends with a dot; at most 254 characters after trimming. Compared case-insensitively."}

def email_opt(desc):
    return {"type": ["string", "null"], "pattern": EMAIL_OPT,
            "description": f"{desc} Optional; blank or null means none. When given, shaped like `local@domain` (D29), at most 254 characters."}

def password(desc):
    return {"type": "string", "minLength": 8, "maxLength": 1024,
            "description": f"{desc} At least 8 characters and at most 1024 bytes (D29); never returned by any endpoint."}

MONEY_NOTE = "Exact decimal written as a JSON number (never a string), with at most 4 fractional digits (D1)."

def money(desc):
    return {"type": "number", "description": f"{desc} {MONEY_NOTE}"}

def amount_out(desc):
    return {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_AMOUNT,
            "description": f"{desc} Positive. {MONEY_NOTE}"}

def amount_in(desc):
    return {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_AMOUNT, "multipleOf": 0.0001,
            "description": f"{desc} Must be a JSON number (a string is refused), positive, at most 999999999999.9999, "
                           "with at most 4 fractional digits (D1); anything else is a 400."}

def instant(desc):
    return {"type": "string", "format": "date-time",
            "description": f"{desc} RFC 3339 UTC timestamp ending in `Z` (D2)."}

DATE_IN_NOTE = ("RFC 3339 timestamp with any offset (normalised to UTC) or a bare date `YYYY-MM-DD` "
                "meaning midnight UTC (D2); years 1900 to 9999.")

YEAR_PATTERN = "^(?:19|[2-9][0-9])[0-9]{2}-"

def date_in(desc):
    return {"type": "string", "pattern": YEAR_PATTERN, "anyOf": [{"format": "date-time"}, {"format": "date"}],
            "description": f"{desc} {DATE_IN_NOTE}"}

def id_out(desc):
    return {"type": "integer", "minimum": 1, "description": desc}

def id_in(desc):
    return {"type": "integer", "minimum": 1, "maximum": I64_MAX, "description": f"{desc} A positive integer."}

def nstr(desc):
    return {"type": ["string", "null"], "description": desc}

def s(desc):
    return {"type": "string", "description": desc}

def b(desc):
    return {"type": "boolean", "description": desc}

def count(desc):
    return {"type": "integer", "minimum": 0, "description": desc}

def ref(name):
    return {"$ref": f"#/components/schemas/{name}"}

def obj(props, desc, required=None, closed=True):
    o = {"type": "object", "description": desc}
    o["required"] = list(props.keys()) if required is None else required
    o["properties"] = props
    if closed:
        o["additionalProperties"] = False
    return o

VENDOR_TYPES = ["Manufacturer", "Wholesaler", "Agency", "Dealer", "Pharmacy", "OwnPharmacy"]
STATUSES = ["PartiallyPaid", "FullyPaid", "Overdue", "Canceled"]
TX_TYPES = ["Cash", "UPI", "NetBanking"]

schemas = {}

# ---- errors -----------------------------------------------------------------------------
schemas["Problem"] = {
    "type": "object",
    "description": "RFC 9457 problem details (D6), sent as `application/problem+json` for every error except the login 401.",
    "required": ["type", "title", "status", "traceId"],
    "properties": {
        "type": {"type": "string", "format": "uri", "description": "A URI naming the kind of problem (the RFC 9110 section of the status)."},
        "title": s("Short summary of the status, e.g. `Bad Request`."),
        "status": {"type": "integer", "minimum": 400, "maximum": 599, "description": "The HTTP status code."},
        "detail": s("A sentence about this occurrence; present on most problems."),
        "errors": {
            "type": "object",
            "description": "Validation (400) and duplicate (409) problems only: field path (camelCase, dotted for nested fields such as `adminUser.password`, query parameters by name, `body` for a body that is not an object) to its messages.",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "traceId": {"type": "string", "pattern": "^[0-9a-f]{32}$", "description": "Identifies the request in the server log; also sent as the `X-Trace-Id` header."},
    },
}
schemas["LoginFailure"] = obj({"message": s("Always the same text, whether the email is unknown, the user inactive or the password wrong (D21).")},
                              "The body of a failed login (401); plain `application/json`, not problem details.")

# ---- auth / onboarding -------------------------------------------------------------------
session_user_props = {
    "id": id_out("User id."),
    "firstName": s("First name."),
    "lastName": s("Last name."),
    "email": s("Email."),
    "roleId": id_out("Role id."),
}
schemas["SessionUser"] = obj(dict(session_user_props, isActive=b("Whether the account is active.")),
                             "The signed-in user inside a login result.")
schemas["OnboardingUser"] = obj(dict(session_user_props), "The admin user inside the onboarding result: no `isActive`, no `createdAt` (spec).")
schemas["Session"] = obj({
    "token": s("Signed JWT (HS256) to send as `Authorization: Bearer <token>`."),
    "expiresAt": instant("When the token expires (24 hours by default, configurable)."),
    "user": ref("SessionUser"),
}, "Login result: a bearer token and the signed-in user.")
schemas["OnboardingSession"] = obj({
    "token": s("Signed JWT (HS256) to send as `Authorization: Bearer <token>`."),
    "expiresAt": instant("When the token expires."),
    "user": ref("OnboardingUser"),
}, "Onboarding result: the first admin is signed in at once.")
schemas["OnboardingStatus"] = obj({"isOnboarded": b("True once an OwnPharmacy vendor and at least one user exist: the frontend goes to login; false: it goes to onboarding.")},
                                  "Whether setup is complete.")
schemas["LoginRequest"] = {
    "type": "object", "description": "Credentials. Unknown fields are ignored.",
    "required": ["email", "password"],
    "properties": {"email": s("Email of an active user (compared case-insensitively)."), "password": s("Password.")},
}
schemas["SetupRequest"] = {
    "type": "object", "description": "Onboarding: the pharmacy (created as the OwnPharmacy vendor) and the first admin user, created in one atomic step. Unknown fields are ignored.",
    "required": ["pharmacy", "adminUser"],
    "properties": {
        "pharmacy": {
            "type": "object", "description": "The operator's own pharmacy.",
            "required": ["name"],
            "properties": {
                "name": name_field("Pharmacy name."),
                "address": opt_text("Postal address."),
                "phone": opt_code("Phone number."),
                "email": email_opt("Email."),
                "drugLicenseNumber1": opt_code("Primary drug licence."),
            },
        },
        "adminUser": {
            "type": "object", "description": "The first admin (role Admin, id 1).",
            "required": ["firstName", "lastName", "email", "password"],
            "properties": {
                "firstName": name_field("First name."),
                "lastName": name_field("Last name."),
                "email": email_req("Email."),
                "password": password("Password."),
            },
        },
    },
}

# ---- vendors ------------------------------------------------------------------------------
GSTIN_PATTERN = rf"^{WS}*(?:(?:0[1-9]|[12][0-9]|3[0-8]|97)[A-Za-z]{{5}}[0-9]{{4}}[A-Za-z][1-9A-Za-z][Zz][0-9A-Za-z]){WS}*$"
schemas["VendorInput"] = {
    "type": "object",
    "description": "Vendor create and full replacement (D14: every field as on create; omitted optional fields become empty). Unknown fields (such as `id`, `isActive` or the totals) are ignored.",
    "required": ["name", "vendorType"],
    "properties": {
        "name": name_field("Name."),
        "vendorType": dict(choice_schema(VENDOR_TYPES),
                           description="One of Manufacturer, Wholesaler, Agency, Dealer, Pharmacy, OwnPharmacy, matched case-insensitively (D7). OwnPharmacy is made at onboarding only: creating one is a 400, and a vendor cannot be changed to or from OwnPharmacy (400), so the pharmacy's own vendor keeps OwnPharmacy and every other vendor one of the other five."),
        "address": opt_text("Postal address."),
        "phone": opt_code("Phone number."),
        "email": email_opt("Email."),
        "drugLicenseNumber1": opt_code("Primary drug licence."),
        "drugLicenseNumber2": opt_code("Secondary drug licence."),
        "additionalDrugLicenseNumbers": {
            "type": ["array", "null"], "maxItems": 20,
            "description": "Further licence numbers; at most 20 entries, blank entries are dropped. Null or absent means none.",
            "items": {"type": "string", "pattern": opt_single(100), "description": "A licence number, at most 100 characters, single line."},
        },
        "drugLicenseValidUntil": dict(date_in("The day the drug licence is valid until (D36); optional, null means unknown."),
                                      type=["string", "null"]),
        "gstin": {"type": ["string", "null"], "pattern": GSTIN_PATTERN,
                  "description": "GSTIN (D37): optional; blank or null means none. 15 characters, matched case-insensitively and stored "
                                 "upper-cased: a state code 01-38 or 97, a PAN (five letters, four digits, a letter), an entity character "
                                 "1-9 or A-Z, `Z`, and the GSTIN mod-36 check character; anything else is a 400 on `gstin`. Unique among "
                                 "active vendors: a taken GSTIN is a 409 (D5)."},
    },
}
vendor_props = {
    "id": id_out("Vendor id."),
    "name": s("Name."),
    "address": nstr("Postal address, or null."),
    "phone": nstr("Phone number, or null."),
    "email": nstr("Email, or null."),
    "vendorType": {"type": "string", "enum": VENDOR_TYPES, "description": "Kind of business, in canonical case."},
    "drugLicenseNumber1": nstr("Primary drug licence, or null."),
    "drugLicenseNumber2": nstr("Secondary drug licence, or null."),
    "additionalDrugLicenseNumbers": {"type": "array", "items": {"type": "string"}, "description": "Further licences (empty when none)."},
    "isActive": b("False once soft-deleted."),
    "outstandingBalance": money("`totalInvoiceValue - totalPaidAmount` (D11); may be negative when overpaid."),
    "totalInvoiceValue": money("Sum of `amount` over the vendor's active invoices (D11)."),
    "totalPaidAmount": money("Sum of the active payments on those invoices (D11)."),
    "createdAt": instant("When created."),
    "updatedAt": instant("When last changed."),
}
vendor_props["drugLicenseValidUntil"] = {"type": ["string", "null"], "format": "date-time",
                                         "description": "The day the drug licence is valid until, as an RFC 3339 UTC timestamp, or null (D36)."}
vendor_props["licenseStatus"] = {"type": "string", "enum": ["Unknown", "Expired", "ExpiringSoon", "Valid"],
                                 "description": "The licence as of today in the business time zone (D36): Unknown without a date, Expired before today, "
                                                "ExpiringSoon from today to today + 30, Valid after that."}
vendor_props["gstin"] = nstr("GSTIN, upper-cased, or null (D37).")
schemas["Vendor"] = obj(vendor_props, "VendorDto: a vendor with its computed totals.")
schemas["VendorBrief"] = obj({
    "id": id_out("Vendor id."),
    "name": s("Name."),
    "vendorType": {"type": "string", "enum": VENDOR_TYPES, "description": "Kind of business."},
    "address": nstr("Postal address, or null."),
    "phone": nstr("Phone number, or null."),
    "email": nstr("Email, or null."),
    "drugLicenseNumber1": nstr("Primary drug licence, or null."),
    "drugLicenseNumber2": nstr("Secondary drug licence, or null."),
    "isActive": b("False once soft-deleted."),
}, "The vendor nested in a single-invoice read (D13).")

# ---- invoices -----------------------------------------------------------------------------
schemas["InvoiceInput"] = {
    "type": "object",
    "description": "Invoice create and full replacement (D14). Unknown fields are ignored.",
    "required": ["vendorId", "invoiceNumber", "amount", "invoiceDate", "dueDate"],
    "properties": {
        "vendorId": id_in("An existing active vendor; otherwise 400."),
        "invoiceNumber": {"type": "string", "pattern": req_single(100),
                          "description": f"Invoice number, unique among active invoices, compared case-insensitively (D4); a taken number is a 409 (D5). Not blank, at most 100 characters. {TRIM_NOTE}."},
        "amount": amount_in("Total amount."),
        "invoiceDate": date_in("Invoice date."),
        "dueDate": date_in("Due date; earlier than `invoiceDate` is a 400 (D2)."),
        "description": opt_text("Free text."),
    },
}
invoice_props = {
    "id": id_out("Invoice id."),
    "vendorId": id_out("The vendor billed by."),
    "vendorName": s("That vendor's name."),
    "invoiceNumber": s("Invoice number."),
    "amount": amount_out("Total amount."),
    "paidAmount": money("Sum of the invoice's active transactions (D10)."),
    "pendingAmount": money("`amount - paidAmount` (D10); negative when overpaid."),
    "status": {"type": "string", "enum": STATUSES,
               "description": "Computed on read, first match wins: Canceled when inactive, FullyPaid when pendingAmount <= 0, Overdue when the due date is before today in the business time zone (D3), else PartiallyPaid."},
    "invoiceDate": instant("Invoice date."),
    "dueDate": instant("Due date."),
    "description": nstr("Free text, or null."),
    "isActive": b("False once canceled (soft-deleted)."),
    "createdAt": instant("When created."),
}
schemas["Invoice"] = obj(invoice_props, "InvoiceDto, as lists, creates, updates and restores return it (no nested vendor).")
schemas["InvoiceWithVendor"] = obj(dict(invoice_props, vendor=ref("VendorBrief")),
                                   "InvoiceDto with the nested vendor, as `GET /api/invoices/{id}` returns it (D13).")
schemas["InvoiceBrief"] = obj({
    "id": id_out("Invoice id."),
    "invoiceNumber": s("Invoice number."),
    "vendorId": id_out("Vendor id (D13)."),
    "vendorName": s("Vendor name."),
    "amount": amount_out("Total amount."),
    "pendingAmount": money("Amount still unpaid as of now; negative when overpaid."),
}, "The invoice nested in a transaction (spec; D13).")

# ---- transactions -------------------------------------------------------------------------
REFERENCE_PATTERN = rf"^{WS}*(?=[\s\S]*[^{WSR}/-])(?:{core(MID1, 64)})?{WS}*$"
REFERENCE_IN = {"type": ["string", "null"], "pattern": REFERENCE_PATTERN,
                "description": "The UPI UTR, bank reference or cheque number (D30): optional, 1 to 64 characters after trimming, single line, "
                               "with at least one letter or digit. Stored trimmed. Its key (D48: the text in Unicode NFKC, upper-cased, keeping "
                               "letters and digits only, so `UTR-1`, `utr.1` and a fullwidth `ＵＴＲ１` are one key) is unique per payment type among active payments: a payment on its own or all "
                               "the payments of one vendor payment hold it; recording it again is a 409 naming `existingTransactionId`."}
schemas["TransactionInput"] = {
    "type": "object",
    "description": "Payment create and full replacement (D14). Unknown fields are ignored.",
    "required": ["invoiceId", "amount", "transactionDate", "transactionType"],
    "properties": {
        "invoiceId": id_in("An existing active invoice; otherwise 400."),
        "amount": amount_in("Amount paid. Overpayment is allowed (D10)."),
        "transactionDate": date_in("When the payment was made; after today in the business time zone is a 400 (D2, D3)."),
        "transactionType": dict(choice_schema(TX_TYPES), description="One of Cash, UPI, NetBanking, matched case-insensitively (D7)."),
        "reference": REFERENCE_IN,
        "description": opt_text("Free text."),
    },
}
schemas["Transaction"] = obj({
    "id": id_out("Transaction id."),
    "invoiceId": id_out("The invoice paid."),
    "amount": amount_out("Amount paid."),
    "transactionDate": instant("When the payment was made."),
    "transactionType": {"type": "string", "enum": TX_TYPES, "description": "How the payment was made, in canonical case."},
    "reference": nstr("The payment's reference as recorded (trimmed), or null (D30)."),
    "description": nstr("Free text, or null."),
    "vendorPaymentId": {"type": ["integer", "null"], "minimum": 1,
                        "description": "The vendor payment this payment is a part of, or null for a payment recorded on its own (D31)."},
    "isActive": b("False once soft-deleted."),
    "createdAt": instant("When recorded."),
    "invoice": ref("InvoiceBrief"),
}, "TransactionDto: a payment with its invoice.")
schemas["Allocation"] = {
    "type": "object", "description": "One share of a vendor payment (D31). Unknown fields are ignored.",
    "required": ["invoiceId", "amount"],
    "properties": {
        "invoiceId": id_in("An active invoice of this vendor, listed once; otherwise 400 on `allocations[i].invoiceId`."),
        "amount": amount_in("What goes to this invoice: at most what it still owes (`allocations[i].amount`)."),
    },
}
schemas["VendorPaymentInput"] = {
    "type": "object",
    "description": "One payment to a vendor over several of its invoices (D31). Unknown fields are ignored.",
    "required": ["amount", "transactionDate", "transactionType"],
    "properties": {
        "amount": amount_in("The whole payment. With `allocations`, it must equal their sum; without, it is spread over the vendor's invoices "
                            "still owing, oldest due first, and may not exceed what they owe (400 on `amount`)."),
        "transactionDate": date_in("When the payment was made; after today in the business time zone is a 400 (D2, D3)."),
        "transactionType": dict(choice_schema(TX_TYPES), description="One of Cash, UPI, NetBanking, matched case-insensitively (D7)."),
        "reference": REFERENCE_IN,
        "description": opt_text("Free text, copied to every payment it creates."),
        "allocations": {"type": ["array", "null"], "items": ref("Allocation"), "minItems": 1, "maxItems": 200,
                        "description": "How the amount is split: 1 to 200 invoices, each listed once. Omitted or null: oldest due first."},
    },
}
schemas["VendorPayment"] = obj({
    "id": id_out("Vendor payment id."),
    "vendorId": id_out("The vendor paid."),
    "vendorName": s("The vendor's name."),
    "amount": amount_out("The amount recorded; it stays so when one of its payments is deleted on its own."),
    "transactionDate": instant("When the payment was made."),
    "transactionType": {"type": "string", "enum": TX_TYPES, "description": "How the payment was made, in canonical case."},
    "reference": nstr("The reference, or null (D30)."),
    "description": nstr("Free text, or null."),
    "createdAt": instant("When recorded."),
    "transactions": {"type": "array", "items": ref("Transaction"), "description": "Its active payments, one per invoice, by id."},
}, "A vendor payment with its active payments (D31).")

# ---- users / roles / permissions / policies -------------------------------------------------
schemas["NewUser"] = {
    "type": "object", "description": "User create; every field required. Unknown fields are ignored.",
    "required": ["firstName", "lastName", "email", "password", "roleId"],
    "properties": {
        "firstName": name_field("First name."),
        "lastName": name_field("Last name."),
        "email": email_req("Email, unique among active users (D4); a taken email is a 409 (D5)."),
        "password": password("Password."),
        "roleId": id_in("An existing active role; otherwise 400."),
    },
}
schemas["UserUpdate"] = {
    "type": "object", "description": "User replacement: names, email and role (the password changes only through `PUT /api/profile/password`). The last active admin cannot be moved off the Admin role (400, D18). Unknown fields are ignored.",
    "required": ["firstName", "lastName", "email", "roleId"],
    "properties": {
        "firstName": name_field("First name."),
        "lastName": name_field("Last name."),
        "email": email_req("Email, unique among active users (D4); a taken email is a 409 (D5)."),
        "roleId": id_in("An existing active role; otherwise 400."),
    },
}
schemas["User"] = obj({
    "id": id_out("User id."),
    "firstName": s("First name."),
    "lastName": s("Last name."),
    "email": s("Email."),
    "roleId": id_out("Role id."),
    "isActive": b("False once soft-deleted."),
    "createdAt": instant("When created."),
}, "UserDto; the password hash is never returned.")
schemas["RoleInput"] = {
    "type": "object", "description": "Role create and update. `isSystem` and `isActive` cannot be set here. Unknown fields are ignored.",
    "required": ["name"],
    "properties": {
        "name": name_field("Name, unique among all roles, compared case-insensitively (D4); a taken name is a 409 (D5). System roles cannot be renamed (400)."),
        "description": opt_text("Description; absent, null or blank means empty."),
    },
}
schemas["Role"] = obj({
    "id": id_out("Role id."),
    "name": s("Name."),
    "description": s("Description (may be empty)."),
    "isSystem": b("True only for the seeded `Admin` and `Pharmacist` roles."),
    "isActive": b("False once soft-deleted."),
    "createdAt": instant("When created."),
}, "RoleDto.")
schemas["Permission"] = obj({
    "id": {"type": "integer", "minimum": 0, "description": "Permission id; 0 only for the admin's full-access entry."},
    "collection": s("Collection, e.g. `Vendor`; `*` in the admin's full-access entry."),
    "action": s("Action, e.g. `Read`; `*` in the admin's full-access entry."),
    "description": s("Description."),
}, "A permission, written `Collection:Action`. Read-only; seeded (D27).")
schemas["PolicyPermission"] = obj({
    "id": id_out("Permission id."),
    "collection": s("Collection."),
    "action": s("Action."),
}, "A permission inside a policy.")
schemas["PolicyInput"] = {
    "type": "object", "description": "Policy create and full replacement. Unknown fields are ignored.",
    "required": ["name"],
    "properties": {
        "name": name_field("Name, unique among active policies, compared case-insensitively (D4); a taken name is a 409 (D5)."),
        "description": opt_text("Description; absent, null or blank means empty."),
        "permissionIds": {
            "type": ["array", "null"], "maxItems": 200,
            "description": "The policy's permissions; each must exist (else 400). Duplicates are dropped; absent or null means none.",
            "items": id_in("Permission id."),
        },
    },
}
schemas["Policy"] = obj({
    "id": id_out("Policy id."),
    "name": s("Name."),
    "description": s("Description (may be empty)."),
    "isActive": b("False once soft-deleted."),
    "permissions": {"type": "array", "items": ref("PolicyPermission"), "description": "Its permissions."},
}, "PolicyDto.")

# ---- settings -----------------------------------------------------------------------------
schemas["SettingUpdate"] = {
    "type": "object", "description": "New value of a setting. Unknown fields are ignored.",
    "required": ["value"],
    "properties": {"value": {"type": "string", "pattern": req_single(100),
                             "description": f"Not blank, at most 100 characters. {TRIM_NOTE}. For `TimeZone` it must be a known IANA zone such as `UTC` or `Asia/Kolkata` (D3), else 400."}},
}
schemas["Setting"] = obj({
    "key": s("Key; immutable (seeded: `Currency`, `TimeZone`, D27)."),
    "value": s("Value; the only updatable part."),
    "description": s("What it is for; immutable."),
}, "AppSettingDto.")

# ---- deletes ------------------------------------------------------------------------------
schemas["DeleteReason"] = {
    "type": "object", "description": "Optional body of a delete; the reason is kept in the audit log (D16, D22). Unknown fields are ignored.",
    "properties": {"reason": opt_text("Why the record is deleted.")},
}

# ---- dashboard ----------------------------------------------------------------------------
schemas["Summary"] = obj({
    "totalVendors": count("Count of all vendor records, active and inactive."),
    "totalInvoices": count("Count of all invoice records, active and canceled."),
    "totalDue": money("Sum of `pendingAmount` over active invoices (D12)."),
    "totalPaid": money("Sum of active transactions (D12)."),
    "recentTransactions": count("Active transactions dated within the last 30 days (D12)."),
}, "Dashboard summary, computed live (D12).")
schemas["TopVendor"] = obj({
    "vendorId": id_out("Vendor id."),
    "vendorName": s("Vendor name."),
    "outstandingBalance": money("Outstanding balance (D11)."),
    "totalInvoices": count("Count of the vendor's active invoices."),
}, "One active vendor ranked by outstanding balance (descending, then name).")
schemas["RecentInvoice"] = obj({
    "id": id_out("Invoice id."),
    "invoiceNumber": s("Invoice number."),
    "vendorName": s("Vendor name."),
    "amount": amount_out("Total amount."),
    "pendingAmount": money("Amount still unpaid; negative when overpaid."),
    "status": {"type": "string", "enum": STATUSES, "description": "Computed status."},
    "invoiceDate": instant("Invoice date."),
    "dueDate": instant("Due date."),
}, "One of the newest invoices (active and canceled), newest `createdAt` first.")
schemas["MonthlyTotal"] = obj({
    "month": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}$", "description": "Month `YYYY-MM` in the business time zone (D3)."},
    "totalAmount": money("Sum of the month's active transactions."),
    "transactionCount": count("Number of the month's active transactions."),
}, "Payments of one month (D12).")

schemas["Due"] = obj({
    "amount": money("The sum of their pending amounts."),
    "invoiceCount": count("How many invoices."),
}, "What falls due in one window (D32).")
schemas["Payables"] = obj({
    "overdue": ref("Due"),
    "dueToday": ref("Due"),
    "dueIn7Days": ref("Due"),
    "dueIn30Days": ref("Due"),
}, "Over active invoices still owing something: overdue (due before today), due today, due from tomorrow to today + 7, and from tomorrow to today + 30 (so it includes the 7 days), in the business time zone (D32).")

# ---- reconciliation (D34-D36) -------------------------------------------------------------
DAY_OUT = {"type": "string", "format": "date", "description": "A calendar day `YYYY-MM-DD` in the business time zone (D34)."}
aging_figures = {
    "notDue": money("Owed on invoices not yet due on the day."),
    "days1To30": money("Owed 1 to 30 days past due."),
    "days31To60": money("Owed 31 to 60 days past due."),
    "days61To90": money("Owed 61 to 90 days past due."),
    "days91To180": money("Owed 91 to 180 days past due."),
    "over180": money("Owed more than 180 days past due."),
    "total": money("The sum of the six buckets."),
    "invoiceCount": count("Invoices with something owed on the day."),
}
schemas["AgingTotals"] = obj(dict(aging_figures), "The aging's sums over every vendor (D34).")
schemas["AgingRow"] = obj(dict({"vendorId": id_out("Vendor id."), "vendorName": s("Vendor name.")}, **aging_figures),
                          "One vendor owed something on the day (D34).")
schemas["Aging"] = obj({
    "asOf": DAY_OUT,
    "vendors": {"type": "array", "items": ref("AgingRow"), "description": "Vendors owed something, by total descending, then name, then id."},
    "totals": ref("AgingTotals"),
}, "The payables aging as of a day (D34): over active invoices dated on or before it, what each still owed then (its amount less "
   "its active payments dated on or before the day), positive remainders only, by days past due.")
schemas["StatementVendor"] = obj({
    "id": id_out("Vendor id."),
    "name": s("Name."),
    "vendorType": {"type": "string", "enum": VENDOR_TYPES, "description": "Kind of business."},
    "gstin": nstr("GSTIN, or null (D37)."),
    "drugLicenseNumber1": nstr("Primary drug licence, or null."),
}, "The vendor at the head of a statement (D35).")
schemas["StatementLine"] = obj({
    "date": DAY_OUT,
    "kind": {"type": "string", "enum": ["Invoice", "Payment"], "description": "What the line records."},
    "invoiceId": id_out("The invoice (the one paid, for a payment)."),
    "invoiceNumber": s("Its number."),
    "transactionId": {"type": ["integer", "null"], "minimum": 1, "description": "The payment, or null for an invoice."},
    "reference": nstr("The payment's reference, or null (D30)."),
    "description": nstr("Free text, or null."),
    "invoiced": money("Invoiced on this line (0 for payments)."),
    "paid": money("Paid on this line (0 for invoices)."),
    "balance": money("The running balance after this line."),
}, "One line of a statement (D35).")
schemas["Statement"] = obj({
    "vendor": ref("StatementVendor"),
    "fromDate": DAY_OUT,
    "toDate": DAY_OUT,
    "openingBalance": money("Invoiced minus paid before `fromDate`."),
    "lines": {"type": "array", "items": ref("StatementLine"),
              "description": "The vendor's active invoices and the active payments of those invoices dated in the range, by date, "
                             "invoices before payments on the same day, then id."},
    "totalInvoiced": money("Invoiced in the range."),
    "totalPaid": money("Paid in the range."),
    "closingBalance": money("`openingBalance + totalInvoiced - totalPaid`."),
}, "A vendor's statement over a range of days (D35).")
schemas["LicenceAlert"] = obj({
    "vendorId": id_out("Vendor id."),
    "vendorName": s("Vendor name."),
    "drugLicenseNumber1": nstr("Primary drug licence, or null."),
    "drugLicenseValidUntil": instant("The day the licence is valid until."),
    "licenseStatus": {"type": "string", "enum": ["Expired", "ExpiringSoon", "Valid"], "description": "The licence as of today (D36)."},
    "daysLeft": {"type": "integer", "description": "Whole days from today to that day: 0 on its last day, negative once expired."},
}, "An active vendor whose drug licence has expired or expires within the window (D36).")

# ---- profile ------------------------------------------------------------------------------
schemas["Profile"] = obj({
    "id": id_out("User id."),
    "firstName": s("First name."),
    "lastName": s("Last name."),
    "email": s("Email."),
    "roleId": id_out("Role id."),
    "roleName": s("The role's name."),
    "isAdmin": b("True for users of the Admin role (D18)."),
    "isActive": b("Whether the account is active."),
    "createdAt": instant("When created."),
    "permissions": {"type": "array", "items": s("`Collection:Action`."),
                    "description": "Resolved permissions as `Collection:Action` (D19); `[\"*:*\"]` for an admin."},
}, "The caller's own profile (D24).")
schemas["ProfileUpdate"] = {
    "type": "object", "description": "What a user may change of their own profile (D24). Unknown fields are ignored.",
    "required": ["firstName", "lastName", "email"],
    "properties": {
        "firstName": name_field("First name."),
        "lastName": name_field("Last name."),
        "email": email_req("Email, unique among active users; a taken email is a 409."),
    },
}
schemas["PasswordChange"] = {
    "type": "object", "description": "A password change by the user themself (D24). Unknown fields are ignored.",
    "required": ["currentPassword", "newPassword"],
    "properties": {
        "currentPassword": s("The password in use now; a wrong one is a 400."),
        "newPassword": password("The new password."),
    },
}

# ---- audit / health -----------------------------------------------------------------------
schemas["AuditEntry"] = obj({
    "id": id_out("Entry id."),
    "at": instant("When it happened."),
    "userId": {"type": ["integer", "null"], "minimum": 1, "description": "Who did it, or null when unknown (e.g. a failed login)."},
    "action": s("What was done: `create`, `update`, `delete`, `restore`, `login`, `login_failed`, `login_throttled` ..."),
    "entity": s("The kind of record: `Vendor`, `Invoice`, `Transaction`, `User`, `Role`, `Policy`, `Setting` ..."),
    "entityId": {"type": ["integer", "null"], "description": "The record's id, or null when it has no numeric id."},
    "reason": nstr("The reason given for a delete (D16), or null."),
    "changes": {"type": ["object", "null"], "description": "The values written, as a JSON object (never a password or hash), or null."},
}, "One audit-log entry (D22).")
schemas["Health"] = obj({
    "status": {"type": "string", "enum": ["ok", "unavailable"], "description": "`ok` when the store answers, `unavailable` (with status 503) when it does not."},
    "database": {"type": "string", "enum": ["sqlite", "postgres", "memory"], "description": "The store's kind."},
}, "Health of the service and its store (D25). Plain `application/json`, not problem details.")

def page_of(item, desc):
    return obj({
        "items": {"type": "array", "items": ref(item), "maxItems": 100, "description": "This page's items."},
        "totalCount": count("How many items the whole filtered list holds."),
        "page": {"type": "integer", "minimum": 1, "description": "The 1-based page number."},
        "pageSize": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Items per page as applied: a requested size above 100 reports 100 (D8)."},
    }, desc)

schemas["VendorPage"] = page_of("Vendor", "A page of vendors.")
schemas["InvoicePage"] = page_of("Invoice", "A page of invoices (without the nested vendor).")
schemas["TransactionPage"] = page_of("Transaction", "A page of transactions, each with its invoice.")
schemas["AuditPage"] = page_of("AuditEntry", "A page of audit-log entries, newest first.")

# ---- headers, parameters, responses -------------------------------------------------------
headers = {
    "Location": {"description": "Where the new resource lives: `/api/<collection>/<id>` (D9).", "required": True,
                 "schema": {"type": "string", "format": "uri-reference"}},
    "IdempotentReplayed": {"description": "Present, with the value `true`, when this answer replays an earlier create sent with the same `Idempotency-Key` and body (D23); nothing was created.",
                           "schema": {"type": "string", "enum": ["true"]}},
    "WWWAuthenticate": {"description": "Always `Bearer` (D6).", "required": True, "schema": {"type": "string"}},
    "RetryAfter": {"description": "Seconds until login attempts for this email are accepted again (D21).", "required": True,
                   "schema": {"type": "integer", "minimum": 1}},
    "RetryAfterUnavailable": {"description": "Seconds after which the request may be sent again: a busy connection pool frees up within them, and a lost database is not retried faster than requests fail.",
                              "required": True, "schema": {"type": "integer", "minimum": 1}},
    "CacheControl": {"description": "`no-store`: tokens are not to be cached.", "required": True, "schema": {"type": "string"}},
    "Allow": {"description": "The methods the path supports.", "required": True, "schema": {"type": "string"}},
}

def hdr(name):
    return {"$ref": f"#/components/headers/{name}"}

def problem_content():
    return {"application/problem+json": {"schema": ref("Problem")}}

def json_content(schema):
    return {"application/json": {"schema": schema}}

responses = {
    "BadRequest": {"description": "The request is invalid: malformed JSON (a field named twice included), a body that is not an object, a missing or mistyped field, an unknown enum value, a bad path or query parameter, or a business rule refused it. Validation problems carry `errors` (D6, D7, D8).",
                   "content": problem_content()},
    "Unauthorized": {"description": "Missing, malformed, forged, expired or revoked bearer token, or the user is no longer active or changed their password since the token was issued (D20).",
                     "headers": {"WWW-Authenticate": hdr("WWWAuthenticate")}, "content": problem_content()},
    "Forbidden": {"description": "The token lacks the required permission (`detail` names it). The permission is checked before any path parameter, query parameter or body is read, so a caller without it gets this answer, never a 400.", "content": problem_content()},
    "NotFound": {"description": "The record does not exist or is soft-deleted.", "content": problem_content()},
    "Conflict": {"description": "Duplicate unique value (D5; `errors` names the field), or a request with the same `Idempotency-Key` is still being processed (D23).",
                 "content": problem_content()},
    "PayloadTooLarge": {"description": "The request body is over 1 MiB (D7).", "content": problem_content()},
    "UnsupportedMediaType": {"description": "A body was sent without a JSON content type (`application/json` or `*/*+json`) (D7).", "content": problem_content()},
    "IdempotencyMismatch": {"description": "This `Idempotency-Key` was already used by the same user with a different request within 24 hours (D23).",
                            "content": problem_content()},
    "TooManyRequests": {"description": "Too many failed logins for this email within 15 minutes (D21).",
                        "headers": {"Retry-After": hdr("RetryAfter")}, "content": problem_content()},
    "ServiceUnavailable": {"description": "The database is busy (every connection in use for the acquire timeout; for a report that takes seconds, such as the aging of every vendor or a statement, every long read's turn taken for the long-read wait), every report slot stayed taken for the report wait (downloads under `/api/reports`), or the database cannot be reached right now; nothing of the request was kept (D48). The one exception is a write whose connection to the database was lost while it was being committed: its `detail` begins `The outcome of this write is unknown`, and it may have been kept; retrying it with the same `Idempotency-Key` is safe.",
                           "headers": {"Retry-After": hdr("RetryAfterUnavailable")}, "content": problem_content()},
    "Error": {"description": "Any other error, as problem details (e.g. 405 with `Allow`, 408 when the request is not received in time, 500).",
              "content": problem_content()},
}

def resp(name):
    return {"$ref": f"#/components/responses/{name}"}

parameters = {
    "IdempotencyKey": {
        "name": "Idempotency-Key", "in": "header", "required": False,
        "description": "Makes the create safe to retry (D23): the same key from the same user with the same body within 24 hours replays the first answer (status, body, `Location`) with `Idempotent-Replayed: true` and creates nothing; the same key with a different body is a 422; while the first request is still running, a 409. 1 to 255 visible ASCII characters, else 400.",
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
    },
    "Page": {"name": "page", "in": "query", "required": False,
             "description": "1-based page number; default 1. Below 1 or not an integer is a 400 (D8).",
             "schema": {"type": "integer", "minimum": 1}},
    "SortDir": {"name": "sortDir", "in": "query", "required": False,
                "description": "`asc` or `desc`, matched case-insensitively; anything else is a 400 (D8).",
                "schema": choice_schema(["asc", "desc"])},
}

def page_size(default):
    return {"name": "pageSize", "in": "query", "required": False,
            "description": f"Items per page; default {default}. Below 1 or not an integer is a 400; above 100 is clamped to 100 and the envelope reports 100 (D8).",
            "schema": {"type": "integer", "minimum": 1}}

def pref(name):
    return {"$ref": f"#/components/parameters/{name}"}

def q(name, desc, schema):
    return {"name": name, "in": "query", "required": False, "description": desc, "schema": schema}

def path_id(name, desc):
    return {"name": name, "in": "path", "required": True, "description": f"{desc} A positive integer; anything else is a 400.",
            "schema": {"type": "integer", "minimum": 1, "maximum": I64_MAX}}

def q_date(name, desc):
    return q(name, f"{desc} {DATE_IN_NOTE}", {"type": "string", "pattern": YEAR_PATTERN, "anyOf": [{"format": "date-time"}, {"format": "date"}]})

def q_id(name, desc):
    return q(name, f"{desc} A positive integer, else 400.", {"type": "integer", "minimum": 1, "maximum": I64_MAX})

def q_search(name, desc):
    return q(name, f"{desc} At most 200 characters after trimming, no control characters; blank means no filter.",
             {"type": "string", "pattern": opt_single(200)})

def q_sort(keys, default):
    return q("sortBy", f"One of {', '.join(keys)} (matched case-insensitively; default `{default}`); anything else is a 400 (D8). Ties are broken by id.",
             choice_schema(keys))

LIMIT = q("limit", "How many rows; default 5. Clamped to 1..100 (D8); not an integer is a 400.", {"type": "integer"})

# ---- operations ---------------------------------------------------------------------------
def op(op_id, tag, summary, description, ok, *, public=False, params=None, body=None, body_required=True, errors=()):
    o = {"operationId": op_id, "tags": [tag], "summary": summary, "description": description}
    if public:
        o["security"] = []
    if params:
        o["parameters"] = params
    if body is not None:
        o["requestBody"] = {"required": body_required, "content": {"application/json": {"schema": ref(body)}}}
    r = dict(ok)
    for code in errors:
        r[str(code)] = {
            400: resp("BadRequest"), 401: resp("Unauthorized"), 403: resp("Forbidden"), 404: resp("NotFound"),
            409: resp("Conflict"), 413: resp("PayloadTooLarge"), 415: resp("UnsupportedMediaType"),
            422: resp("IdempotencyMismatch"), 429: resp("TooManyRequests"), 503: resp("ServiceUnavailable"),
        }[code]
    r["default"] = resp("Error")
    o["responses"] = r
    return o

def ok200(desc, schema, headers=None):
    d = {"description": desc}
    if headers:
        d["headers"] = headers
    d["content"] = json_content(schema)
    return {"200": d}

def created(desc, schema, links=None):
    r = {"description": f"{desc} Also the answer to a replayed create (D23).",
         "headers": {"Location": hdr("Location"), "Idempotent-Replayed": hdr("IdempotentReplayed")},
         "content": json_content(schema)}
    if links:
        r["links"] = links
    return {"201": r}

def id_links(cap):
    return {f"{verb}{cap}": {"operationId": f"{verb.lower()}{cap}", "parameters": {"id": "$response.body#/id"},
                              "description": f"The `id` of the new record."}
            for verb in ["Get", "Update", "Delete"]}

def restore_link(cap):
    return {f"Restore{cap}": {"operationId": f"restore{cap}", "parameters": {"id": "$request.path.id"},
                               "description": f"Undo this delete (D15)."}}

def get_link(cap):
    return {f"Get{cap}": {"operationId": f"get{cap}", "parameters": {"id": "$response.body#/id"},
                           "description": "The restored record."}}

def no_content(desc, links=None):
    r = {"description": desc}
    if links:
        r["links"] = links
    return {"204": r}

def ok_links(ok, links):
    ok["200"]["links"] = links
    return ok

def arr(item, desc=None):
    a = {"type": "array", "items": ref(item)}
    return a

paths = {}

def add(path, method, operation, path_params=None):
    item = paths.setdefault(path, {})
    if path_params and "parameters" not in item:
        item["parameters"] = path_params
    item[method] = operation

BODY_ERRS = (413, 415)

# Auth
add("/api/auth/login", "post", op(
    "login", "Auth", "Sign in",
    "Checks an email and password and returns a bearer token. Unknown emails, inactive users and wrong passwords all get the same 401 `{message}` body (plain JSON, not problem details). After 5 failed logins for one email within 15 minutes, further attempts for that email answer 429 with `Retry-After` until the window passes; a success resets the count (D21). Recorded in the audit log (D22).",
    dict(ok200("Signed in.", ref("Session"), {"Cache-Control": hdr("CacheControl")}),
         **{"401": {"description": "Invalid email or password (also an inactive user).", "content": json_content(ref("LoginFailure"))}}),
    public=True, body="LoginRequest", errors=(400, 413, 415, 429, 503)))

# Onboarding
add("/api/onboarding/status", "get", op(
    "getOnboardingStatus", "Onboarding", "Whether setup is complete",
    "Onboarded means an OwnPharmacy vendor exists and at least one user account exists.",
    ok200("The onboarding state.", ref("OnboardingStatus")), public=True, errors=(503,)))
add("/api/onboarding/setup", "post", op(
    "completeOnboarding", "Onboarding", "Create the pharmacy and the first admin",
    "One-time, public. Creates the OwnPharmacy vendor and the first admin user (role Admin) in one atomic step and signs the admin in at once. 400 when setup is already complete or the body is invalid (paths such as `pharmacy.name`, `adminUser.password`); 409 if a concurrent setup took the email.",
    ok200("Setup done; the admin is signed in.", ref("OnboardingSession"), {"Cache-Control": hdr("CacheControl")}),
    public=True, body="SetupRequest", errors=(400, 409, 413, 415, 503)))

# System
add("/api/health", "get", op(
    "getHealth", "System", "Health check",
    "Public and cheap (D25): 200 `{status: \"ok\", database}` when the store answers, 503 `{status: \"unavailable\", database}` when it does not. Plain JSON, not problem details.",
    {"200": {"description": "The store answers.", "content": json_content(ref("Health"))},
     "503": {"description": "The store is unreachable.", "content": json_content(ref("Health"))}},
    public=True))
add("/api/openapi.json", "get", op(
    "getOpenApi", "System", "This OpenAPI document",
    "Public (D25): the OpenAPI 3.1 document describing every route, served as kept in the repository.",
    ok200("The OpenAPI document.", {"type": "object"}), public=True))

# Generic CRUD builder ------------------------------------------------------------------------
def crud(base, tag, coll, singular, plural, dto, input_schema, *, list_op, get_dto=None,
         create_conflict=False, update_conflict=False, restore_conflict=False, restore_parent=None,
         delete_note="", update_note="", create_note="", get_note=""):
    cap = singular[0].upper() + singular[1:]
    capP = plural[0].upper() + plural[1:]
    add(base, "get", list_op)
    add(base, "post", op(
        f"create{cap}", tag, f"Create a {singular}",
        f"Permission `{coll}:Create`. Answers 201 with `Location: {base}/<id>` (D9). {create_note}Accepts an `Idempotency-Key` (D23).".replace("  ", " "),
        created(f"The {singular} was created.", ref(dto), id_links(cap)),
        params=[pref("IdempotencyKey")], body=input_schema,
        errors=(400, 401, 403, 409, 413, 415, 422, 503)))
    id_param = [path_id("id", f"{cap} id.")]
    item = f"{base}/{{id}}"
    add(item, "get", op(
        f"get{cap}", tag, f"Get a {singular}",
        f"Permission `{coll}:Read`. 404 when missing or soft-deleted. {get_note}".strip(),
        ok200(f"The {singular}.", ref(get_dto or dto)), errors=(400, 401, 403, 404, 503)), id_param)
    add(item, "put", op(
        f"update{cap}", tag, f"Replace a {singular}",
        f"Permission `{coll}:Update`. Full replacement: the body is the create body, all fields as on create (D14). 404 when missing or soft-deleted. {update_note}".strip(),
        ok200(f"The updated {singular}.", ref(dto)), body=input_schema,
        errors=(400, 401, 403, 404) + ((409,) if update_conflict else ()) + (413, 415, 503)))
    add(item, "delete", op(
        f"delete{cap}", tag, f"Delete a {singular}",
        f"Permission `{coll}:Delete`. Soft delete: the record gets `isActive = false`. The optional body `{{reason}}` is kept in the audit log (D16, D22). {delete_note}".strip(),
        no_content("Deleted; no body.", restore_link(cap)), body="DeleteReason", body_required=False,
        errors=(400, 401, 403, 404, 413, 415, 503)))
    restore_desc = f"Permission `{coll}:Update`. Turns a soft-deleted {singular} active again (D15). 404 when missing or already active."
    if restore_conflict:
        restore_desc += " 409 when its unique value is now taken by an active record."
    if restore_parent:
        restore_desc += f" 400 while its {restore_parent} is inactive."
    add(f"{item}/restore", "post", op(
        f"restore{cap}", tag, f"Restore a deleted {singular}", restore_desc,
        ok_links(ok200(f"The restored {singular}.", ref(dto)), get_link(cap)),
        errors=(400, 401, 403, 404) + ((409,) if restore_conflict else ()) + (503,)), id_param)

REPORT_ACTIVE = "Validated (`true` or `false`, else 400) but ignored: reports hold active records only (D26)."

def vendor_filters(listing):
    return [q_search("search", "Partial, case-insensitive match on the name."),
            q("vendorType", "Only this type: Manufacturer, Wholesaler, Agency, Dealer, Pharmacy or OwnPharmacy, matched case-insensitively; anything else is a 400 (D8).",
              choice_schema(VENDOR_TYPES)),
            q("isActive", "`true` (default) lists active vendors, `false` soft-deleted ones (admin only, else 403)." if listing else REPORT_ACTIVE,
              {"type": "boolean"}),
            q("licenseStatus", "Only vendors whose drug licence has this status today: Unknown, Expired, ExpiringSoon or Valid, matched "
                               "case-insensitively; anything else is a 400 (D36).", choice_schema(["Unknown", "Expired", "ExpiringSoon", "Valid"]))]

def transaction_filters(listing):
    return [q_id("invoiceId", "Only this invoice's payments."),
            q_date("fromDate", "Inclusive lower bound on transactionDate."),
            q_date("toDate", "Inclusive upper bound on transactionDate; earlier than fromDate is a 400."),
            q("transactionType", "Only this type: Cash, UPI or NetBanking, matched case-insensitively; anything else is a 400 (D8).",
              choice_schema(TX_TYPES)),
            q("reference", "Only payments whose reference has this one's key: case, punctuation, spaces and compatibility forms do not matter (D30, D48). "
                           "1 to 64 characters after trimming, else 400.", {"type": "string", "pattern": REFERENCE_PATTERN}),
            q("isActive", "`true` (default): active payments; `false`: soft-deleted ones." if listing else REPORT_ACTIVE, {"type": "boolean"})]

# Vendors
crud("/api/vendors", "Vendors", "Vendor", "vendor", "vendors", "Vendor", "VendorInput",
     list_op=op("listVendors", "Vendors", "List vendors",
                "Permission `Vendor:Read`; `isActive=false` (soft-deleted vendors) also needs an admin token, otherwise 403. Paginated (D8).",
                ok200("A page of vendors.", ref("VendorPage")),
                params=[pref("Page"), page_size(10)] + vendor_filters(True)
                       + [q_sort(["name", "vendorType", "outstandingBalance"], "name"), dict(pref("SortDir"))],
                errors=(400, 401, 403, 503)),
     create_conflict=True, update_conflict=True, restore_conflict=True,
     create_note="`vendorType` OwnPharmacy is a 400; a taken GSTIN is a 409 (D37). ",
     update_note="A vendor cannot be changed to or from OwnPharmacy (400); a taken GSTIN is a 409 (D37).",
     delete_note="Its invoices and payments are kept. The OwnPharmacy vendor cannot be deleted (400).")
# fix 409 on vendor create: only the idempotency in-progress case applies (no unique vendor field)

def invoice_filters(listing):
    return [q("status", "Only this computed status: FullyPaid, PartiallyPaid, Overdue or Canceled, matched case-insensitively; anything else is a 400 (D8).",
                          choice_schema(STATUSES)),
                        q_search("search", "Substring match on invoice number or vendor name, case-insensitive."),
                        q_id("vendorId", "Only this vendor's invoices."),
                        q_search("invoiceNumber", "Substring match on the invoice number only, case-insensitive."),
                        q_date("fromDate", "Inclusive lower bound on invoiceDate."),
                        q_date("toDate", "Inclusive upper bound on invoiceDate; earlier than fromDate is a 400."),
                        q("minAmount", "Inclusive lower bound on amount; a decimal with at most 4 fractional digits, |value| <= 999999999999.9999.",
                          {"type": "number", "minimum": -MAX_AMOUNT, "maximum": MAX_AMOUNT, "multipleOf": 0.0001}),
                        q("maxAmount", "Inclusive upper bound on amount; less than minAmount is a 400.",
                          {"type": "number", "minimum": -MAX_AMOUNT, "maximum": MAX_AMOUNT, "multipleOf": 0.0001}),
                        q("isActive", "Omitted: all invoices; `true`: active only; `false`: canceled only." if listing else REPORT_ACTIVE, {"type": "boolean"}),
                        q("dueWithinDays", "Only active invoices still owing something, due from today to today plus this many days in the "
                                           "business time zone (D32); 0 to 366, else 400.", {"type": "integer", "minimum": 0, "maximum": 366}),
                        q("overpaid", "`true`: only invoices whose pendingAmount is below zero; `false`: only those at zero or above (D33).",
                          {"type": "boolean"})]

# Invoices
crud("/api/invoices", "Invoices", "Invoice", "invoice", "invoices", "Invoice", "InvoiceInput",
     get_dto="InvoiceWithVendor",
     list_op=op("listInvoices", "Invoices", "List invoices",
                "Permission `Invoice:Read`. Paginated (D8); items carry no nested vendor. Status is computed as of today (D3, D10).",
                ok200("A page of invoices.", ref("InvoicePage")),
                params=[pref("Page"), page_size(15),
                        q_sort(["invoiceDate", "dueDate", "amount", "pendingAmount", "paidAmount", "invoiceNumber", "vendorName"], "invoiceDate"),
                        dict(pref("SortDir"))] + invoice_filters(True),
                errors=(400, 401, 403, 503)),
     create_conflict=True, update_conflict=True, restore_conflict=True, restore_parent="vendor",
     create_note="The vendor must exist and be active (400). A taken invoice number is a 409 (D5). ",
     update_note="A taken invoice number is a 409 (D5).",
     get_note="Carries the nested `vendor` (D13).",
     delete_note="Its status becomes Canceled and its number is freed (D4).")

# Transactions
crud("/api/transactions", "Transactions", "Transaction", "transaction", "transactions", "Transaction", "TransactionInput",
     list_op=op("listTransactions", "Transactions", "List transactions",
                "Permission `Transaction:Read`. Paginated (D8); each item carries its invoice.",
                ok200("A page of transactions.", ref("TransactionPage")),
                params=[pref("Page"), page_size(15),
                        q_sort(["transactionDate", "amount", "transactionType", "createdAt"], "transactionDate"),
                        dict(pref("SortDir"))] + transaction_filters(True),
                errors=(400, 401, 403, 503)),
     create_conflict=True, update_conflict=True, restore_conflict=True, restore_parent="invoice",
     create_note="The invoice must exist and be active (400); a date after today is a 400 (D2). A reference another payment holds is a 409 with `existingTransactionId` (D30). ",
     update_note="A reference another payment holds is a 409 (D30).")

# Vendor payments (D31)
add("/api/vendors/{id}/payments", "post", op("createVendorPayment", "Transactions", "Pay a vendor over several invoices",
    "Permission `Transaction:Create`. Records one payment to an active vendor (404 for an unknown or deleted vendor) as one payment "
    "transaction per invoice, all with its date, type, reference and description and with `vendorPaymentId` (D31): split as "
    "`allocations` say (each an active invoice of this vendor, listed once, at most what it still owes, adding up exactly to "
    "`amount`), or over the vendor's invoices still owing, oldest due first. Every check runs in one transaction with the "
    "writes, so no vendor payment ever overpays; any breach is a 400 naming the field (`allocations[2].amount`) and writes nothing. "
    "A reference another payment holds is a 409 (D30). Answers 201 with `Location: /api/vendor-payments/<id>` (D9). Accepts an "
    "`Idempotency-Key` (D23).",
    created("The vendor payment was recorded.", ref("VendorPayment"),
            {"GetVendorPayment": {"operationId": "getVendorPayment", "parameters": {"id": "$response.body#/id"},
                                  "description": "The new vendor payment."}}),
    params=[pref("IdempotencyKey")], body="VendorPaymentInput",
    errors=(400, 401, 403, 404, 409, 413, 415, 422, 503)), [path_id("id", "Vendor id.")])
vpid = [path_id("id", "Vendor payment id.")]
add("/api/vendor-payments/{id}", "get", op("getVendorPayment", "Transactions", "Get a vendor payment",
    "Permission `Transaction:Read`. The vendor payment with its active payments; 404 when missing or none of its payments is active (D31).",
    ok200("The vendor payment.", ref("VendorPayment")), errors=(400, 401, 403, 404, 503)), vpid)
add("/api/vendor-payments/{id}", "delete", op("deleteVendorPayment", "Transactions", "Delete a vendor payment",
    "Permission `Transaction:Delete`. Soft-deletes all of its active payments in one transaction (D31); each can be restored on its own. "
    "The optional body `{reason}` is kept in the audit log (D16). 404 when missing or none of its payments is active.",
    no_content("Deleted; no body."), body="DeleteReason", body_required=False,
    errors=(400, 401, 403, 404, 413, 415, 503)), vpid)

# Users
add("/api/users", "get", op("listUsers", "Users", "List users",
    "A valid token is enough. Active users only (D17).", ok200("Active users.", arr("User")), errors=(401, 503)))
add("/api/users", "post", op("createUser", "Users", "Create a user",
    "Permission `User:Create`. The role must exist and be active (400); a taken email is a 409 (D5). Answers 201 with `Location: /api/users/<id>` (D9). Accepts an `Idempotency-Key` (D23).",
    created("The user was created.", ref("User"), id_links("User")), params=[pref("IdempotencyKey")], body="NewUser",
    errors=(400, 401, 403, 409, 413, 415, 422, 503)))
add("/api/users/me/permissions", "get", op("getMyPermissions", "Users", "The caller's permissions",
    "A valid token is enough. The caller's permissions resolved from the active policies of their active role and their directly attached active policies, deduplicated and sorted (D19). For an admin: `[{\"id\":0,\"collection\":\"*\",\"action\":\"*\",\"description\":\"Full access\"}]`.",
    ok200("The caller's permissions.", arr("Permission")), errors=(401, 503)))
uid = [path_id("id", "User id.")]
add("/api/users/{id}", "get", op("getUser", "Users", "Get a user",
    "A valid token is enough. 404 when missing or soft-deleted.", ok200("The user.", ref("User")),
    errors=(400, 401, 404, 503)), uid)
add("/api/users/{id}", "put", op("updateUser", "Users", "Replace a user",
    "Permission `User:Update`. Replaces names, email and role; a taken email is a 409 (D5); the last active admin cannot be moved off the Admin role (400, D18).",
    ok200("The updated user.", ref("User")), body="UserUpdate",
    errors=(400, 401, 403, 404, 409, 413, 415, 503)), uid)
add("/api/users/{id}", "delete", op("deleteUser", "Users", "Delete a user",
    "Permission `User:Delete`. Soft delete; the user's tokens stop working (D20). A user cannot delete themself and the last active admin cannot be deleted (400, D18). The optional body `{reason}` is kept in the audit log (D16).",
    no_content("Deleted; no body.", restore_link("User")), body="DeleteReason", body_required=False,
    errors=(400, 401, 403, 404, 413, 415, 503)), uid)
add("/api/users/{id}/restore", "post", op("restoreUser", "Users", "Restore a deleted user",
    "Permission `User:Update`. Turns a soft-deleted user active again (D15). 404 when missing or already active; 409 when the email is now taken; 400 while the user's role is inactive.",
    ok_links(ok200("The restored user.", ref("User")), get_link("User")), errors=(400, 401, 403, 404, 409, 503)), uid)
add("/api/users/{id}/policies", "get", op("listUserPolicies", "Users", "Policies attached to a user",
    "A valid token is enough. The policies attached directly to the user (D19). 404 when the user is missing or soft-deleted.",
    ok200("The user's policies.", arr("Policy")), errors=(400, 401, 404, 503)), uid)
upid = [path_id("id", "User id."), path_id("policyId", "Policy id.")]
add("/api/users/{id}/policies/{policyId}", "post", op("attachUserPolicy", "Users", "Attach a policy to a user",
    "Permission `User:Update` (D19). 404 for a missing user or policy. Takes effect in tokens issued afterwards.",
    no_content("Attached; no body."), errors=(400, 401, 403, 404, 503)), upid)
add("/api/users/{id}/policies/{policyId}", "delete", op("detachUserPolicy", "Users", "Detach a policy from a user",
    "Permission `User:Update` (D19). 404 for a missing user.",
    no_content("Detached; no body."), errors=(400, 401, 403, 404, 503)), upid)

# Roles
add("/api/roles", "get", op("listRoles", "Roles", "List roles",
    "A valid token is enough. Active and inactive roles (D17).", ok200("Every role.", arr("Role")), errors=(401, 503)))
add("/api/roles", "post", op("createRole", "Roles", "Create a role",
    "Permission `Role:Create`. The new role has `isSystem = false`. A taken name is a 409 (D5). Answers 201 with `Location: /api/roles/<id>` (D9). Accepts an `Idempotency-Key` (D23).",
    created("The role was created.", ref("Role"), id_links("Role")), params=[pref("IdempotencyKey")], body="RoleInput",
    errors=(400, 401, 403, 409, 413, 415, 422, 503)))
rid = [path_id("id", "Role id.")]
add("/api/roles/{id}", "get", op("getRole", "Roles", "Get a role",
    "A valid token is enough. 404 when missing or soft-deleted (D17).", ok200("The role.", ref("Role")),
    errors=(400, 401, 404, 503)), rid)
add("/api/roles/{id}", "put", op("updateRole", "Roles", "Update a role",
    "Permission `Role:Update`. Changes name and description; `isSystem` and `isActive` cannot change here. System roles cannot be renamed (400); a taken name is a 409 (D5).",
    ok200("The updated role.", ref("Role")), body="RoleInput",
    errors=(400, 401, 403, 404, 409, 413, 415, 503)), rid)
add("/api/roles/{id}", "delete", op("deleteRole", "Roles", "Delete a role",
    "Permission `Role:Delete`. Soft delete; a system role answers 400. The optional body `{reason}` is kept in the audit log (D16).",
    no_content("Deleted; no body.", restore_link("Role")), body="DeleteReason", body_required=False,
    errors=(400, 401, 403, 404, 413, 415, 503)), rid)
add("/api/roles/{id}/restore", "post", op("restoreRole", "Roles", "Restore a deleted role",
    "Permission `Role:Update`. Turns a soft-deleted role active again (D15). 404 when missing or already active.",
    ok_links(ok200("The restored role.", ref("Role")), get_link("Role")), errors=(400, 401, 403, 404, 503)), rid)
rpid = [path_id("id", "Role id."), path_id("policyId", "Policy id.")]
add("/api/roles/{id}/policies/{policyId}", "post", op("attachRolePolicy", "Roles", "Attach a policy to a role",
    "Permission `Role:Update`. 404 for a missing role or policy. Takes effect in tokens issued afterwards (D19).",
    no_content("Attached; no body."), errors=(400, 401, 403, 404, 503)), rpid)
add("/api/roles/{id}/policies/{policyId}", "delete", op("detachRolePolicy", "Roles", "Detach a policy from a role",
    "Permission `Role:Update`. 404 for a missing role.",
    no_content("Detached; no body."), errors=(400, 401, 403, 404, 503)), rpid)

# Permissions
add("/api/permissions", "get", op("listPermissions", "Permissions", "List permissions",
    "Permission `Permission:Read`. Every seeded permission (D27); read-only.", ok200("Every permission.", arr("Permission")),
    errors=(401, 403, 503)))

# Policies
add("/api/policies", "get", op("listPolicies", "Policies", "List policies",
    "Permission `Policy:Read`. Active policies only (D17).", ok200("Active policies.", arr("Policy")),
    errors=(401, 403, 503)))
add("/api/policies", "post", op("createPolicy", "Policies", "Create a policy",
    "Permission `Policy:Create`. Unknown permission ids are a 400; a taken name is a 409 (D5). Answers 201 with `Location: /api/policies/<id>` (D9). Accepts an `Idempotency-Key` (D23).",
    created("The policy was created.", ref("Policy"), id_links("Policy")), params=[pref("IdempotencyKey")], body="PolicyInput",
    errors=(400, 401, 403, 409, 413, 415, 422, 503)))
pid = [path_id("id", "Policy id.")]
add("/api/policies/{id}", "get", op("getPolicy", "Policies", "Get a policy",
    "Permission `Policy:Read`. With its full permission list; 404 when missing or soft-deleted.",
    ok200("The policy.", ref("Policy")), errors=(400, 401, 403, 404, 503)), pid)
add("/api/policies/{id}", "put", op("updatePolicy", "Policies", "Replace a policy",
    "Permission `Policy:Update`. Replaces name, description and permission list. Unknown permission ids are a 400; a taken name is a 409 (D5).",
    ok200("The updated policy.", ref("Policy")), body="PolicyInput",
    errors=(400, 401, 403, 404, 409, 413, 415, 503)), pid)
add("/api/policies/{id}", "delete", op("deletePolicy", "Policies", "Delete a policy",
    "Permission `Policy:Delete`. Soft delete; it stops granting permissions to new tokens (D19). The optional body `{reason}` is kept in the audit log (D16).",
    no_content("Deleted; no body.", restore_link("Policy")), body="DeleteReason", body_required=False,
    errors=(400, 401, 403, 404, 413, 415, 503)), pid)
add("/api/policies/{id}/restore", "post", op("restorePolicy", "Policies", "Restore a deleted policy",
    "Permission `Policy:Update`. Turns a soft-deleted policy active again (D15). 404 when missing or already active; 409 when its name is now taken.",
    ok_links(ok200("The restored policy.", ref("Policy")), get_link("Policy")), errors=(400, 401, 403, 404, 409, 503)), pid)
ppid = [path_id("id", "Policy id."), path_id("permissionId", "Permission id.")]
add("/api/policies/{id}/permissions/{permissionId}", "post", op("addPolicyPermission", "Policies", "Add a permission to a policy",
    "Permission `Policy:Update`. 404 for a missing policy or permission.",
    no_content("Added; no body."), errors=(400, 401, 403, 404, 503)), ppid)
add("/api/policies/{id}/permissions/{permissionId}", "delete", op("removePolicyPermission", "Policies", "Remove a permission from a policy",
    "Permission `Policy:Update`. 404 for a missing policy.",
    no_content("Removed; no body."), errors=(400, 401, 403, 404, 503)), ppid)

# Settings
add("/api/settings", "get", op("listSettings", "Settings", "List settings",
    "Permission `Setting:Read`. Settings are seeded (D27) and cannot be created or deleted.",
    ok200("Every setting.", arr("Setting")), errors=(401, 403, 503)))
kp = [{"name": "key", "in": "path", "required": True, "description": "Setting key, e.g. `Currency` or `TimeZone`.", "schema": {"type": "string"}}]
add("/api/settings/{key}", "get", op("getSetting", "Settings", "Get a setting",
    "Permission `Setting:Read`. 404 for an unknown key.", ok200("The setting.", ref("Setting")),
    errors=(401, 403, 404, 503)), kp)
add("/api/settings/{key}", "put", op("updateSetting", "Settings", "Change a setting's value",
    "Permission `Setting:Update`. Only the value changes; key and description are immutable. `TimeZone` must be a known IANA zone (400, D3). 404 for an unknown key. Recorded in the audit log (D22).",
    ok200("The updated setting.", ref("Setting")), body="SettingUpdate",
    errors=(400, 401, 403, 404, 413, 415, 503)), kp)

# Dashboard
add("/api/dashboard/summary", "get", op("getDashboardSummary", "Dashboard", "Summary figures",
    "Permission `Dashboard:Read`. Computed live on every request (D12).", ok200("The summary.", ref("Summary")),
    errors=(401, 403, 503)))
add("/api/dashboard/top-vendors", "get", op("getTopVendors", "Dashboard", "Vendors with the largest outstanding balance",
    "Permission `Dashboard:Read`. Active vendors ranked by outstanding balance, descending, then name (D12).",
    ok200("The top vendors.", {"type": "array", "items": ref("TopVendor"), "maxItems": 100}), params=[LIMIT],
    errors=(400, 401, 403, 503)))
add("/api/dashboard/recent-invoices", "get", op("getRecentInvoices", "Dashboard", "Most recently created invoices",
    "Permission `Dashboard:Read`. Active and canceled invoices, newest `createdAt` first (D12).",
    ok200("The newest invoices.", {"type": "array", "items": ref("RecentInvoice"), "maxItems": 100}), params=[copy.deepcopy(LIMIT)],
    errors=(400, 401, 403, 503)))
add("/api/dashboard/monthly-transactions", "get", op("getMonthlyTransactions", "Dashboard", "Payments per month",
    "Permission `Dashboard:Read`. Exactly 12 rows, current month first; months without payments are zero rows (D12).",
    ok200("Twelve months.", {"type": "array", "items": ref("MonthlyTotal"), "minItems": 12, "maxItems": 12}),
    errors=(401, 403, 503)))

add("/api/dashboard/payables", "get", op("getPayables", "Dashboard", "What falls due when",
    "Permission `Dashboard:Read`. Amount and count of active invoices still owing something: overdue, due today, within 7 and within 30 days (D32).",
    ok200("The payables.", ref("Payables")), errors=(401, 403, 503)))

add("/api/dashboard/license-alerts", "get", op("getLicenseAlerts", "Dashboard", "Drug licences expired or about to",
    "Permission `Dashboard:Read`. Active vendors whose drug licence has expired or expires within `withinDays` days, soonest first (D36).",
    ok200("The alerts.", arr("LicenceAlert")),
    params=[q("withinDays", "The window in days from today: 0 to 366, default 30; anything else is a 400.",
              {"type": "integer", "minimum": 0, "maximum": 366})],
    errors=(400, 401, 403, 503)))

# Profile
add("/api/profile", "get", op("getProfile", "Profile", "The caller's profile",
    "A valid token is enough (D24).", ok200("The caller's profile.", ref("Profile")), errors=(401, 503)))
add("/api/profile", "put", op("updateProfile", "Profile", "Update the caller's profile",
    "A valid token is enough (D24). Changes first name, last name and email; a taken email is a 409.",
    ok200("The updated profile.", ref("Profile")), body="ProfileUpdate",
    errors=(400, 401, 409, 413, 415, 503)))
add("/api/profile/password", "put", op("changePassword", "Profile", "Change the caller's password",
    "A valid token is enough (D24). A wrong current password or a new one under 8 characters is a 400. Answers a fresh login result; every older token of the user stops working (D20).",
    ok200("Password changed; a fresh session.", ref("Session"), {"Cache-Control": hdr("CacheControl")}), body="PasswordChange",
    errors=(400, 401, 413, 415, 503)))

# Reports
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
headers["ContentDisposition"] = {"description": "`attachment; filename=\"<name>_YYYYMMDD.xlsx\"`, the date taken in the business time zone (D3, D26).",
                                 "required": True, "schema": {"type": "string"}}

def report(path, op_id, summary, coll, name, columns, filters):
    add(path, "get", op(op_id, "Reports", summary,
        f"Permission `{coll}:Read`. An Excel workbook, generated on demand, of the active records the matching list would show with these filters (no paging, D26): file `{name}_YYYYMMDD.xlsx`, columns {columns}. Amount cells are numbers, date cells real dates; the bold header row is frozen with an autofilter. Invalid filters answer problem details before any byte of the file is sent.",
        {"200": {"description": "The workbook.",
                 "headers": {"Content-Disposition": hdr("ContentDisposition"), "Cache-Control": hdr("CacheControl")},
                 "content": {XLSX: {"schema": {"type": "string", "format": "binary", "contentMediaType": XLSX}}}}},
        params=filters, errors=(400, 401, 403, 503)))

report("/api/reports/vendors", "downloadVendorsReport", "Vendors as an Excel file", "Vendor", "vendors",
       "ID, Name, Type, Address, Phone, Email, Drug License 1, Drug License 2, License Valid Until, License Status, GSTIN, Outstanding Balance, Total Invoice Value, Total Paid, Created At",
       vendor_filters(False))
report("/api/reports/invoices", "downloadInvoicesReport", "Invoices as an Excel file", "Invoice", "invoices",
       "ID, Invoice Number, Vendor, Amount, Paid Amount, Pending Amount, Status, Invoice Date, Due Date, Description",
       invoice_filters(False))
report("/api/reports/transactions", "downloadTransactionsReport", "Transactions as an Excel file", "Transaction", "transactions",
       "ID, Invoice Number, Vendor, Amount, Type (Cash / UPI / Net Banking), Transaction Date, Reference, Description",
       transaction_filters(False))

# Reconciliation
AS_OF = q("asOf", "The aging day, `YYYY-MM-DD` in the business time zone; default today; after today or malformed is a 400 (D34).",
          {"type": "string", "format": "date"})
AGING_VENDOR = q_id("vendorId", "Only this vendor; an unknown vendor is a 404.")
add("/api/payables/aging", "get", op("getAging", "Reports", "Payables aging",
    "Permission `Invoice:Read`. What each vendor was owed on a day, by how late it was (D34): over active invoices dated on or before "
    "`asOf`, each invoice's amount less its active payments dated on or before `asOf`, positive remainders only, in the buckets "
    "not due, 1-30, 31-60, 61-90, 91-180 and over 180 days past due. Payments made later never change a past aging.",
    ok200("The aging.", ref("Aging")), params=[AS_OF, AGING_VENDOR], errors=(400, 401, 403, 404, 503)))
STATEMENT_RANGE = [q("fromDate", "The first day, `YYYY-MM-DD` in the business time zone; default the first day of this month. After `toDate` is a 400.",
                     {"type": "string", "format": "date"}),
                   q("toDate", "The last day, `YYYY-MM-DD`; default today.", {"type": "string", "format": "date"})]
add("/api/vendors/{id}/statement", "get", op("getVendorStatement", "Vendors", "A vendor's statement",
    "Permissions `Vendor:Read`, `Invoice:Read` and `Transaction:Read` (D48: it shows payments and their references). The vendor's ledger over a range of days (D35): the opening balance, its invoices and "
    "payments with the running balance, the totals and the closing balance. A deleted vendor's statement is still served; an unknown "
    "vendor is a 404.",
    ok200("The statement.", ref("Statement")), params=STATEMENT_RANGE, errors=(400, 401, 403, 404, 503)),
    [path_id("id", "Vendor id.")])
XLSX_OK = {"200": {"description": "The workbook.",
                   "headers": {"Content-Disposition": hdr("ContentDisposition"), "Cache-Control": hdr("CacheControl")},
                   "content": {XLSX: {"schema": {"type": "string", "format": "binary", "contentMediaType": XLSX}}}}}
add("/api/reports/aging", "get", op("downloadAgingReport", "Reports", "The aging as an Excel file",
    "Permission `Invoice:Read`. The aging of `GET /api/payables/aging` with the same parameters (D34) as a workbook `aging_YYYYMMDD.xlsx` "
    "named after `asOf`: columns Vendor ID, Vendor, Not Due, 1-30 Days, 31-60 Days, 61-90 Days, 91-180 Days, Over 180 Days, Total, "
    "Invoices, one row per vendor and a totals row last.",
    copy.deepcopy(XLSX_OK), params=[copy.deepcopy(AS_OF), copy.deepcopy(AGING_VENDOR)], errors=(400, 401, 403, 404, 503)))
add("/api/reports/vendor-statement", "get", op("downloadVendorStatementReport", "Reports", "A vendor's statement as an Excel file",
    "Permissions `Vendor:Read`, `Invoice:Read` and `Transaction:Read` (D48). The statement of `GET /api/vendors/{id}/statement` (D35) as a workbook "
    "`statement_<vendorId>_YYYYMMDD.xlsx` dated today: an opening balance row, the lines (Date, Kind, Invoice Number, Transaction ID, "
    "Reference, Description, Invoiced, Paid, Balance) and a closing balance row.",
    copy.deepcopy(XLSX_OK),
    params=[q("vendorId", "The vendor; required, a positive integer, else 400; an unknown vendor is a 404.",
              {"type": "integer", "minimum": 1, "maximum": I64_MAX})] + copy.deepcopy(STATEMENT_RANGE),
    errors=(400, 401, 403, 404, 503)))

# Audit
add("/api/audit-log", "get", op("listAuditLog", "Audit", "Read the audit log",
    "Permission `AuditLog:Read` (D22). Every create, update, delete (with its reason), restore, login, failed login and settings change, newest first, paginated (D8).",
    ok200("A page of audit entries.", ref("AuditPage")),
    params=[q("entity", "Only this kind of record (exact, case-insensitive), e.g. `Vendor`; at most 50 characters after trimming; blank means no filter.",
              {"type": "string", "pattern": rf"^{WS}*(?:{NWS}(?:[\s\S]{{0,48}}{NWS})?)?{WS}*$"}),
            q_id("entityId", "Only this record id."),
            q_id("userId", "Only this user's actions."),
            q_date("fromDate", "At or after."),
            q_date("toDate", "At or before."),
            pref("Page"), page_size(15)],
    errors=(400, 401, 403, 503)))

# vendor create/restore: no unique field, so 409 only for idempotency in progress; keep 409 on create.

doc = {
    "openapi": "3.1.0",
    "info": {
        "title": "pharmapay",
        "version": "0.1.0",
        "description": (
            "Accounts-payable API for a pharmacy: vendors, the invoices they send and the payments made against them, "
            "with role-based access control, settings, a live dashboard, a user profile area and an audit log.\n\n"
            "- Amounts are exact decimals written as JSON numbers (never strings) with at most 4 fractional digits, "
            "at most 999999999999.9999 (D1). Timestamps in responses are RFC 3339 UTC ending in `Z`; requests accept RFC 3339 "
            "with any offset or a bare `YYYY-MM-DD` (D2).\n"
            "- Every error is RFC 9457 problem details (`application/problem+json`: `type`, `title`, `status`, `traceId`, "
            "`detail`, and `errors` by field for validation and duplicates), except the failed login (401), which is "
            "`{\"message\"}` (D6). Every response carries an `X-Trace-Id` header.\n"
            "- All routes except `POST /api/auth/login`, `/api/onboarding/*`, `GET /api/health` and `GET /api/openapi.json` "
            "need `Authorization: Bearer <token>`; a missing or invalid token is a 401 with `WWW-Authenticate: Bearer`, a "
            "missing permission a 403.\n"
            "- JSON bodies need `Content-Type: application/json` (415), at most 1 MiB (413); unknown fields are ignored; "
            "enum values are matched case-insensitively and written in canonical case (D7). Unknown paths answer 404 and "
            "known paths with another method 405 with `Allow`.\n"
            "- Deletes are soft (`isActive = false`) and can be undone with `POST .../{id}/restore` (D15). Creates accept an "
            "`Idempotency-Key` (D23). Lists are paginated: `pageSize` above 100 is clamped to 100 (D8)."
        ),
    },
    "servers": [{"url": "/"}],
    "security": [{"bearerAuth": []}],
    "tags": [{"name": t} for t in ["Auth", "Onboarding", "System", "Vendors", "Invoices", "Transactions", "Users", "Roles",
                                   "Permissions", "Policies", "Settings", "Dashboard", "Profile", "Reports", "Audit"]],
    "paths": paths,
    "components": {
        "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                                           "description": "HS256 JWT from `POST /api/auth/login`, `POST /api/onboarding/setup` or `PUT /api/profile/password`."}},
        "parameters": parameters,
        "headers": headers,
        "responses": responses,
        "schemas": schemas,
    },
}

# the Allow header is documented for completeness on the default response description only
del headers["Allow"]

out = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
open(sys.argv[1], "w").write(out)
