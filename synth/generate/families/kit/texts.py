"""Text pools the families draw from: support issues, mail, products, banks, reasons."""

from __future__ import annotations

ISSUES: tuple[tuple[str, str, str], ...] = (
    ("SSO login fails for the whole team", "Since this morning nobody can sign in through SSO; the IdP redirect ends in an error.", "sso"),
    ("Export to CSV times out", "Exporting last quarter's report to CSV spins for minutes and then fails.", "export"),
    ("API rate limit too low for nightly sync", "Our nightly sync hits HTTP 429 after about 10,000 calls.", "rate limit"),
    ("Webhook deliveries are delayed", "Webhooks arrive 20 to 40 minutes late since yesterday.", "webhook"),
    ("Dashboard charts show no data", "All charts on the main dashboard are empty although data is there.", "dashboard"),
    ("Cannot invite new users", "The invite button returns an error for every new address we try.", "invite"),
    ("Invoice shows wrong VAT number", "Our latest invoice lists an old VAT number; we need it corrected.", "vat"),
    ("Mobile app crashes on login", "The iOS app closes right after entering the password.", "mobile"),
    ("Scheduled reports not delivered", "The Monday scheduled report did not reach anyone.", "report"),
    ("Search returns outdated results", "Search still shows records we deleted last week.", "search"),
    ("Data import stuck at 99%", "The bulk import of 40,000 rows has been stuck at 99% for hours.", "import"),
    ("Password reset emails never arrive", "Reset emails do not reach any of our users.", "password"),
    ("Audit log missing entries", "The audit log has no entries for last Friday afternoon.", "audit log"),
    ("Slow page loads in the EU region", "Pages take 8 to 10 seconds to load for our Frankfurt office.", "latency"),
    ("Two-factor codes rejected", "Valid two-factor codes are rejected for several admins.", "2fa"),
    ("Calendar sync duplicates events", "Every synced meeting shows up twice in Outlook.", "calendar"),
    ("Permissions reset after update", "After the last update all custom roles lost their permissions.", "permissions"),
    ("Billing page shows the wrong plan", "The billing page says Starter although we pay for Business.", "billing page"),
)  # fmt: skip

PLANS: tuple[tuple[str, int], ...] = (
    ("Team plan", 49000), ("Business plan", 129000), ("Starter plan", 19000), ("Enterprise plan", 420000),
    ("Analytics add-on", 35000), ("Priority support add-on", 18500), ("Extra storage (1 TB)", 9900),
)  # fmt: skip
CARD_BRANDS = ("visa", "mastercard", "amex")
BANKS = (
    "JPMorgan Chase Bank", "Wells Fargo Bank", "Bank of America", "Citibank", "U.S. Bank", "PNC Bank",
    "Truist Bank", "Capital One", "TD Bank", "Fifth Third Bank",
)  # fmt: skip
SHADY_BANKS = ("Metro Community Bank", "Coastal Savings Bank", "First Horizon Online", "Summit Digital Bank")
LOSS_REASONS = ("Chose a competitor", "No budget this year", "Project cancelled", "Went with an in-house tool")
LOSS_GIST = {
    "Chose a competitor": r"competit|rival|another (?:vendor|provider|supplier)|switch",
    "No budget this year": r"budget|fund|afford|cost|money|spend",
    "Project cancelled": r"project|cancel|scrap|stopp|shelved|dropped",
    "Went with an in-house tool": r"in.?house|internal|own (?:tool|solution|system)|buil[dt]",
}
"""What a loss reason says, as a regex (any case): a stated reason names it in some words, "Hi." does not."""
NEWSLETTERS: tuple[tuple[str, str, str], ...] = (
    ("news@saasweekly.com", "SaaS Weekly", "This week: pricing pages that convert"),
    ("events@cloudsummit.io", "Cloud Summit", "Your ticket for Cloud Summit is confirmed"),
    ("noreply@calendar-app.com", "Calendar", "Reminder: quarterly planning on Thursday"),
    ("it@brightwave.io", "Brightwave IT", "Laptop refresh: pick a slot"),
    ("hr@brightwave.io", "Brightwave People Team", "Open enrolment closes Friday"),
    ("team@designdigest.com", "Design Digest", "Ten dashboards we loved this month"),
)  # fmt: skip
INTERNAL: tuple[tuple[str, str], ...] = (
    ("Team lunch on Friday", "We are booking a table for Friday; reply if you are in."),
    ("On-call rota next week", "The rota for next week is in the shared calendar."),
    ("Quarterly goals draft", "First draft of the quarterly goals is ready for comments."),
    ("Office closed Monday", "The office is closed on Monday for maintenance."),
)  # fmt: skip
TOPICS: tuple[tuple[str, str, str], ...] = (
    ("Data retention for our audit", "how long you keep deleted records, for our compliance audit next month", "retention"),
    ("Question about SOC 2 report", "whether you can share your latest SOC 2 report under NDA", "SOC 2"),
    ("Volume discount for next year", "whether a volume discount is possible if we add 40 seats next year", "discount"),
    ("Single sign-on with Azure AD", "how to set up single sign-on with Azure AD for our tenant", "Azure AD"),
    ("Invoice address change", "changing the address printed on our invoices to our new office", "invoice address"),
    ("Sandbox environment request", "getting a sandbox environment for our developers", "sandbox"),
)  # fmt: skip
