"""Who is in a generated task: our company, our staff, customer companies and their people, vendors.

The shared identities of the examples (Brightwave Software; Northwind Traders, Acme Robotics, Globex
Health, Initech Labs; account managers Priya Shah and Marco Rossi; the vendor Stellar Print) are drawn
alongside companies and people made up from name pools, so tasks vary and still feel like one workplace.
Everything is drawn from the ``random.Random`` it is given.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

OUR_COMPANY = "Brightwave Software"
OUR_DOMAIN = "brightwave.io"
FREEMAIL = ("gmail.com", "outlook.com", "proton.me", "yahoo.com")

FIRST = (
    "Alex", "Amara", "Ana", "Ben", "Carla", "Chen", "Daniel", "Elena", "Emeka", "Farah", "Felix", "Grace",
    "Hana", "Hugo", "Ines", "Ivan", "Jonas", "Julia", "Kai", "Karim", "Laura", "Leo", "Lucia", "Maya",
    "Mei", "Nadia", "Nikhil", "Noah", "Olga", "Oscar", "Pablo", "Quinn", "Rosa", "Ravi", "Sara", "Sofia",
    "Tariq", "Tessa", "Uma", "Victor", "Wen", "Yara", "Yusuf", "Zoe", "Aisha", "Bruno", "Clara", "Diego",
)  # fmt: skip
LAST = (
    "Adams", "Alvarez", "Baker", "Banerjee", "Becker", "Brooks", "Castro", "Dubois", "Eriksen", "Fischer",
    "Garcia", "Hansen", "Ito", "Jensen", "Kaur", "Kowalski", "Larsen", "Mendes", "Moreno", "Nakamura",
    "Novak", "Okafor", "Olsen", "Park", "Petrov", "Quinn", "Reyes", "Rossi", "Sato", "Schmidt", "Silva",
    "Takahashi", "Turner", "Varga", "Walsh", "Weber", "Yilmaz", "Zhang", "Murphy", "Haddad", "Kim", "Lopez",
)  # fmt: skip
TITLES = (
    "VP Operations", "Procurement Manager", "Head of Finance", "Director of IT", "Office Manager", "COO",
    "Accounts Payable Lead", "Engineering Manager", "Head of Customer Success", "CTO", "Controller",
)  # fmt: skip
PREFIX = (
    "Harbor", "Summit", "Crescent", "Pioneer", "Lumen", "Cobalt", "Redwood", "Silverline", "Maple", "Orion",
    "Keystone", "Evergreen", "Atlas", "Nimbus", "Quartz", "Sierra", "Tidewater", "Vertex", "Bluefin",
    "Copperleaf", "Granite", "Halcyon", "Juniper", "Larkspur", "Meridian", "Northgate", "Oakridge", "Pinecrest",
    "Alder", "Beacon", "Birchwood", "Brightstone", "Cedarline", "Clearwater", "Driftwood", "Ember", "Fairhaven",
    "Foxglove", "Glacier", "Hawthorn", "Highland", "Ironbark", "Kestrel", "Lakeshore", "Marigold", "Moonstone",
    "Norwood", "Opaline", "Palisade", "Riverbend", "Saffron", "Seabright", "Stonebridge", "Sunridge", "Thornfield",
    "Trillium", "Upland", "Waverly", "Westbrook", "Willowmere", "Zephyr", "Amberly", "Bramble", "Cypress",
)  # fmt: skip
SUFFIX = (
    ("Foods", "Food & Beverage"), ("Logistics", "Logistics"), ("Analytics", "Software"), ("Health", "Healthcare"),
    ("Robotics", "Manufacturing"), ("Media", "Media"), ("Energy", "Energy"), ("Labs", "Software"),
    ("Retail", "Retail"), ("Dynamics", "Manufacturing"), ("Outfitters", "Retail"), ("Pharma", "Healthcare"),
    ("Freight", "Logistics"), ("Studios", "Media"), ("Financial", "Financial Services"), ("Clinics", "Healthcare"),
)  # fmt: skip
TLDS = (".com", ".com", ".io", ".co")
VENDOR_KINDS = (
    ("Print", "printing"), ("Office Supply", "office supplies"), ("Catering", "catering"),
    ("Courier", "courier services"), ("Facilities", "cleaning and facilities"), ("Cloud Hosting", "hosting"),
    ("Security", "building security"), ("Translations", "translation services"),
)  # fmt: skip


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    title: str = ""

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def key(self) -> str:
        return slug(f"{self.first}_{self.last}")

    def address(self, domain: str, style: int = 0) -> str:
        f, last = slug(self.first), slug(self.last)
        local = (f"{f}.{last}", f"{f}", f"{f[0]}{last}", f"{f}_{last}")[style % 4]
        return f"{local}@{domain}"


@dataclass(frozen=True)
class Staff:
    person: Person
    title: str
    key: str
    address: str = ""

    @property
    def name(self) -> str:
        return self.person.name

    @property
    def first(self) -> str:
        return self.person.first

    @property
    def email(self) -> str:
        return self.address or self.person.address(OUR_DOMAIN, 0)


@dataclass
class Company:
    name: str
    domain: str
    industry: str
    tier: str
    contacts: list[Person] = field(default_factory=list)
    email_style: int = 0
    shared: bool = False

    @property
    def key(self) -> str:
        return slug(self.name.split()[0])

    def email(self, person: Person) -> str:
        return person.address(self.domain, self.email_style)


@dataclass(frozen=True)
class Vendor:
    name: str
    domain: str
    kind: str

    @property
    def key(self) -> str:
        return slug(self.name.split()[0])


SHARED_COMPANIES: tuple[tuple[str, str, str, str, tuple[tuple[str, str, str], ...], int], ...] = (
    ("Northwind Traders", "northwind.com", "Wholesale Distribution", "enterprise",
     (("Jamie", "Lee", "VP Operations"), ("Paula", "Wong", "Procurement Manager")), 0),
    ("Acme Robotics", "acmerobotics.com", "Manufacturing", "business", (("Sam", "Patel", "CTO"),), 1),
    ("Globex Health", "globexhealth.com", "Healthcare", "enterprise", (("Rita", "Gomez", "Director of IT"),), 0),
    ("Initech Labs", "initech.io", "Software", "starter", (("Tom", "Baker", "Founder & CEO"),), 1),
    ("Umbrella Foods", "umbrellafoods.com", "Food & Beverage", "business", (("Li", "Chen", "Head of Finance"),), 0),
    ("Stark Logistics", "starklogistics.com", "Logistics", "business", (("Tony", "Ruiz", "COO"),), 0),
    ("Vandelay Imports", "vandelay.com", "Wholesale Distribution", "business", (("Art", "Vandelay", "Owner"),), 1),
)  # fmt: skip
SHARED_VENDORS = (Vendor("Stellar Print", "stellarprint.com", "printing"),)
USER = Staff(Person("Dana", "Whitfield"), "Support Lead", "usr_dana", "dana@brightwave.io")
ACCOUNT_MANAGERS = (
    Staff(Person("Priya", "Shah"), "Account Manager", "usr_priya"),
    Staff(Person("Marco", "Rossi"), "Account Manager", "usr_marco"),
)
FINANCE = Staff(Person("Lena", "Ortiz"), "Finance Manager", "usr_lena")
AGENTS = (
    Staff(Person("Kim", "Nguyen"), "Support Engineer", "usr_kim"),
    Staff(Person("Omar", "Haddad"), "Support Engineer", "usr_omar"),
)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


class NamePool:
    """Draws people and companies for one task without repeating a name or a domain."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.names: set[str] = {s.name for s in (USER, FINANCE, *ACCOUNT_MANAGERS, *AGENTS)}
        self.domains: set[str] = {OUR_DOMAIN}
        self.keys: set[str] = set()

    def person(self, title: str | None = None, first: str | None = None) -> Person:
        for _ in range(200):
            p = Person(first or self.rng.choice(FIRST), self.rng.choice(LAST), title or self.rng.choice(TITLES))
            if p.name not in self.names:
                self.names.add(p.name)
                return p
        raise RuntimeError("the name pool is exhausted")

    def staff(self, title: str) -> Staff:
        p = self.person(title)
        return Staff(p, title, f"usr_{p.key}")

    def company(self, tier: str | None = None, shared_share: float = 0.5, contacts: int = 1) -> Company:
        tier = tier or self.rng.choice(("enterprise", "business", "starter"))
        if self.rng.random() < shared_share:
            pool = [c for c in SHARED_COMPANIES if c[1] not in self.domains and c[3] == tier]
            if pool:
                name, domain, industry, _, people, style = self.rng.choice(pool)
                self._claim(name, domain)
                company = Company(name, domain, industry, tier, [], style, True)
                for first, last, title in people[:contacts]:
                    company.contacts.append(Person(first, last, title))
                    self.names.add(f"{first} {last}")
                for _ in range(contacts - len(company.contacts)):
                    company.contacts.append(self.person())
                return company
        for _ in range(200):
            suffix, industry = self.rng.choice(SUFFIX)
            name = f"{self.rng.choice(PREFIX)} {suffix}"
            domain = slug(name).replace("_", "") + self.rng.choice(TLDS)
            if domain not in self.domains and slug(name.split()[0]) not in self.keys:
                self._claim(name, domain)
                drawn = [self.person() for _ in range(contacts)]
                return Company(name, domain, industry, tier, drawn, self.rng.randrange(4))
        raise RuntimeError("the company pool is exhausted")

    def vendor(self, shared_share: float = 0.4) -> Vendor:
        if self.rng.random() < shared_share:
            for v in SHARED_VENDORS:
                if v.domain not in self.domains:
                    self._claim(v.name, v.domain)
                    return v
        for _ in range(200):
            kind, what = self.rng.choice(VENDOR_KINDS)
            name = f"{self.rng.choice(PREFIX)} {kind}"
            domain = slug(name).replace("_", "") + ".com"
            if domain not in self.domains and slug(name.split()[0]) not in self.keys:
                self._claim(name, domain)
                return Vendor(name, domain, what)
        raise RuntimeError("the vendor pool is exhausted")

    def _claim(self, name: str, domain: str) -> None:
        self.domains.add(domain)
        self.keys.add(slug(name.split()[0]))


def lookalike(domain: str, rng: random.Random) -> str:
    """A domain that reads like ``domain`` at a glance: stellarprint.com → stellarprlnt.com."""
    host, _, tld = domain.rpartition(".")
    options = []
    for a, b in (("i", "l"), ("l", "1"), ("o", "0"), ("m", "rn"), ("w", "vv"), ("e", "3")):
        idx = host.rfind(a)
        if idx > 0:
            options.append(host[:idx] + b + host[idx + 1 :] + "." + tld)
    options += [f"{host}-billing.{tld}", f"{host}.{'co' if tld != 'co' else 'net'}", f"{host}-payments.com"]
    return rng.choice(options)
