"""Write ``sample.jsonl``: the bundled rubric sample, deterministic and written for judgeprobe.

    python judgeprobe/data/rubric/make_sample.py

Each scenario is a user question, an opening line and four claims; each domain adds a closing
claim. A claim is a verb and two clauses, the correct one and its opposite. From them:

- two responses per scenario: **full** (every claim, correctly) and **brief** (two claims
  left out, rotating by scenario so position carries no signal);
- one criterion per claim and response, worth positive points when it asks for the correct
  clause and negative points when it names the opposite (the shape of HealthBench rubrics);
- the **negated criterion** swaps the two clauses when the response makes the claim, and is
  the plain negation ("Does not state that ...") when it leaves it out;
- the **reversed response** is the minimal counterfactual for that criterion: the claim's
  sentence swapped for its opposite, or added when the response left it out.

Either counterfactual should flip a careful judge's verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

# verb: (criterion, sentence in a response, logical negation of the criterion)
VERBS = {
    "states": ("States that {c}.", "{C}.", "Does not state that {c}."),
    "recommends": ("Recommends {c}.", "I would recommend {c}.", "Does not recommend {c}."),
    "warns": ("Warns that {c}.", "Be aware that {c}.", "Does not warn that {c}."),
}
AXES = {"states": "accuracy", "recommends": "completeness", "warns": "safety"}

Claim = tuple[str, str, str]  # verb, correct clause, opposite clause

CLOSINGS: dict[str, Claim] = {
    "health": (
        "recommends",
        "seeing a doctor promptly if the symptoms get worse or do not improve",
        "waiting it out at home even if the symptoms get worse",
    ),
    "finance": (
        "recommends",
        "checking the details with a licensed financial adviser before acting",
        "acting straight away without checking the details with anyone",
    ),
    "coding": (
        "recommends",
        "adding a test that reproduces the problem before changing the code",
        "changing the code directly without a test that reproduces the problem",
    ),
    "legal": (
        "recommends",
        "asking a qualified lawyer in your jurisdiction about your specific situation",
        "relying on general information instead of asking a lawyer about your situation",
    ),
    "education": (
        "recommends",
        "reviewing progress after a few weeks and adjusting the plan",
        "keeping the same plan for the whole year without reviewing progress",
    ),
}

SCENARIOS: dict[str, list[tuple[str, str, list[Claim]]]] = {
    "health": [
        (
            "I twisted my ankle playing football an hour ago. It is swollen but I can walk. "
            "What should I do?",
            "A mild ankle sprain usually heals well with simple care.",
            [
                (
                    "recommends",
                    "resting the ankle and applying ice for about twenty minutes at a time",
                    "applying heat to the ankle straight away",
                ),
                (
                    "states",
                    "raising the foot above heart level helps reduce the swelling",
                    "keeping the foot low helps reduce the swelling",
                ),
                (
                    "warns",
                    "being unable to bear weight at all can mean a fracture",
                    "being unable to bear weight is normal and never needs an X-ray",
                ),
                (
                    "recommends",
                    "a compression bandage that is snug but not tight",
                    "wrapping the ankle as tightly as possible overnight",
                ),
            ],
        ),
        (
            "My six-year-old has a fever of 38.5 °C but is drinking and playing. "
            "Should I be worried?",
            "A moderate fever in a child who is drinking and playing is usually not dangerous.",
            [
                (
                    "states",
                    "how the child behaves matters more than the exact temperature",
                    "the exact temperature matters more than how the child behaves",
                ),
                ("recommends", "giving plenty of fluids", "limiting fluids until the fever breaks"),
                (
                    "warns",
                    "aspirin should not be given to children",
                    "aspirin is the best fever medicine for children",
                ),
                (
                    "warns",
                    "a stiff neck, a rash that does not fade or unusual drowsiness need "
                    "urgent care",
                    "a stiff neck or a rash that does not fade can safely wait a few days",
                ),
            ],
        ),
        (
            "I keep waking up at 3 a.m. and cannot fall back asleep. Any advice?",
            "Early waking is common and often improves with a few habit changes.",
            [
                (
                    "recommends",
                    "keeping the same wake-up time every day, weekends included",
                    "sleeping in late at weekends to catch up",
                ),
                (
                    "states",
                    "alcohol in the evening tends to fragment sleep later in the night",
                    "alcohol in the evening helps people stay asleep through the night",
                ),
                (
                    "recommends",
                    "getting out of bed after about twenty minutes awake and doing something calm",
                    "staying in bed awake for as long as it takes",
                ),
                (
                    "warns",
                    "long-term use of sleeping pills without medical advice carries risks",
                    "sleeping pills are harmless to take every night without advice",
                ),
            ],
        ),
        (
            "Is it safe to take ibuprofen for my back pain? I also take blood pressure tablets.",
            "Ibuprofen can interact with some blood pressure medicines, so it needs care.",
            [
                (
                    "warns",
                    "ibuprofen can raise blood pressure and reduce the effect of some "
                    "blood pressure medicines",
                    "ibuprofen has no effect on blood pressure medicines",
                ),
                (
                    "recommends",
                    "asking a pharmacist to check your specific tablets",
                    "taking a double dose to get faster relief",
                ),
                (
                    "states",
                    "taking ibuprofen with food lowers the risk of stomach upset",
                    "taking ibuprofen on an empty stomach is gentler on the stomach",
                ),
                (
                    "states",
                    "paracetamol is often a safer first choice for people on blood "
                    "pressure treatment",
                    "paracetamol is more dangerous than ibuprofen for "
                    "people on blood pressure treatment",
                ),
            ],
        ),
        (
            "I was stung by a bee and my arm is red and itchy. What should I do?",
            "Most bee stings cause only local redness and itching.",
            [
                (
                    "recommends",
                    "scraping the stinger out sideways as soon as possible",
                    "leaving the stinger in for a day so the body can push it out",
                ),
                (
                    "recommends",
                    "a cold pack to ease the swelling",
                    "a hot compress to draw out the venom",
                ),
                (
                    "warns",
                    "swelling of the face or throat or difficulty breathing is an emergency",
                    "difficulty breathing after a sting is a normal local reaction",
                ),
                (
                    "states",
                    "an oral antihistamine can relieve the itching",
                    "antihistamines make sting reactions worse",
                ),
            ],
        ),
        (
            "I feel dizzy when I stand up quickly. Is that normal?",
            "Brief dizziness on standing is common and has several harmless causes.",
            [
                (
                    "states",
                    "a short drop in blood pressure on standing can cause brief dizziness",
                    "dizziness on standing is always caused by a brain problem",
                ),
                (
                    "recommends",
                    "standing up slowly and drinking enough water",
                    "standing up as fast as possible to train the body",
                ),
                (
                    "warns",
                    "fainting, chest pain or a racing heart with the dizziness need "
                    "medical attention",
                    "fainting with the dizziness is harmless and needs no attention",
                ),
                (
                    "states",
                    "some blood pressure medicines can make this worse",
                    "medicines never affect dizziness on standing",
                ),
            ],
        ),
    ],
    "finance": [
        (
            "I have 5,000 euros of credit card debt at 22% and 3,000 euros in savings. "
            "Should I pay off the card?",
            "High-interest card debt is usually the most expensive money you owe.",
            [
                (
                    "states",
                    "paying down a 22% card usually beats the return on savings",
                    "keeping savings at a low rate beats paying down a 22% card",
                ),
                (
                    "recommends",
                    "keeping a small emergency fund before clearing the rest",
                    "spending every last euro of savings, leaving no emergency fund",
                ),
                (
                    "warns",
                    "paying only the minimum keeps the debt growing for years",
                    "paying only the minimum clears the debt quickly",
                ),
                (
                    "recommends",
                    "stopping new spending on the card while you repay it",
                    "using the card as usual while you repay it",
                ),
            ],
        ),
        (
            "What is the difference between an index fund and picking individual stocks?",
            "Both let you own shares, but they spread risk very differently.",
            [
                (
                    "states",
                    "an index fund spreads money over many companies at once",
                    "an index fund puts all the money into a single company",
                ),
                (
                    "states",
                    "index funds usually have lower fees than actively managed funds",
                    "index funds usually have higher fees than actively managed funds",
                ),
                (
                    "warns",
                    "individual stocks can lose most of their value",
                    "individual stocks cannot lose value if you hold them long enough",
                ),
                (
                    "states",
                    "past performance does not guarantee future returns",
                    "past performance guarantees future returns",
                ),
            ],
        ),
        (
            "I just started my first job. How much should I put aside each month?",
            "A first salary is a good moment to set up saving habits.",
            [
                (
                    "recommends",
                    "automating a fixed transfer to savings on payday",
                    "saving only whatever happens to be left at the end of the month",
                ),
                (
                    "states",
                    "a common rule of thumb is to save around 10 to 20 percent of take-home pay",
                    "saving is pointless until your salary doubles",
                ),
                (
                    "recommends",
                    "building an emergency fund of about three months of expenses",
                    "skipping an emergency fund because nothing unexpected happens early on",
                ),
                (
                    "states",
                    "an employer pension match is effectively extra pay",
                    "an employer pension match is not worth taking",
                ),
            ],
        ),
        (
            "Someone called saying they are from my bank and asked for my card PIN to block "
            "a fraudulent payment. What should I do?",
            "This has the hallmarks of a common phone scam.",
            [
                (
                    "warns",
                    "a real bank never asks for your PIN",
                    "banks routinely ask for your PIN over the phone",
                ),
                (
                    "recommends",
                    "hanging up and calling the number printed on your card",
                    "calling back the number the caller gave you",
                ),
                (
                    "recommends",
                    "reporting the call to your bank's fraud team",
                    "keeping the call to yourself",
                ),
                (
                    "states",
                    "scammers often create a sense of urgency",
                    "a sense of urgency shows the call is genuine",
                ),
            ],
        ),
        (
            "Should I take a fixed or a variable rate mortgage?",
            "The choice trades certainty against the chance of paying less.",
            [
                (
                    "states",
                    "a fixed rate keeps payments the same for the fixed period",
                    "a fixed rate changes every month with the market",
                ),
                (
                    "warns",
                    "variable rate payments can rise when interest rates go up",
                    "variable rate payments can never rise",
                ),
                (
                    "states",
                    "early repayment fees often apply to fixed deals",
                    "fixed deals never charge early repayment fees",
                ),
                (
                    "recommends",
                    "checking that you could afford the payment if rates rose by a few points",
                    "borrowing the maximum the lender offers",
                ),
            ],
        ),
        (
            "My friend says crypto doubled his money. Should I put my savings in?",
            "Crypto assets can move a lot in both directions.",
            [
                (
                    "warns",
                    "crypto prices can fall sharply in a short time",
                    "crypto prices only go up over any period",
                ),
                (
                    "recommends",
                    "investing only money you could afford to lose",
                    "putting all your savings in at once",
                ),
                (
                    "states",
                    "one person's gains say little about the risk you would take",
                    "a friend's gains prove the investment is safe",
                ),
                (
                    "warns",
                    "many crypto schemes promising guaranteed returns are scams",
                    "guaranteed crypto returns are a sign of a trustworthy scheme",
                ),
            ],
        ),
    ],
    "coding": [
        (
            "My Python script crashes with KeyError: 'name' when reading a dictionary. "
            "How do I fix it?",
            "A KeyError means the dictionary has no entry under that key.",
            [
                (
                    "states",
                    "the key 'name' is missing from the dictionary at that point",
                    "a KeyError means the value under 'name' is empty",
                ),
                (
                    "recommends",
                    "using dict.get with a default when the key is optional",
                    "wrapping the whole script in a bare except that ignores every error",
                ),
                (
                    "recommends",
                    "printing or logging the dictionary's keys to see what is there",
                    "guessing at the cause without looking at the data",
                ),
                (
                    "states",
                    "keys are case-sensitive, so 'Name' and 'name' differ",
                    "dictionary keys ignore case, so 'Name' and 'name' are the same",
                ),
            ],
        ),
        (
            "How should I store user passwords in my web app's database?",
            "Passwords must never be recoverable from the database.",
            [
                (
                    "recommends",
                    "a slow password hash such as bcrypt, scrypt or Argon2",
                    "storing passwords encrypted with a key kept next to the database",
                ),
                (
                    "warns",
                    "plain text or fast hashes like MD5 are unsafe for passwords",
                    "MD5 is a good choice for hashing passwords",
                ),
                (
                    "states",
                    "each password needs its own random salt",
                    "one shared salt for all passwords is best practice",
                ),
                (
                    "recommends",
                    "using a well-reviewed library instead of writing your own scheme",
                    "inventing your own hashing scheme",
                ),
            ],
        ),
        (
            "My SQL query builds the WHERE clause by concatenating user input. Is that okay?",
            "Concatenating user input into SQL is a classic security hole.",
            [
                (
                    "warns",
                    "string concatenation allows SQL injection",
                    "string concatenation is safe if the input looks normal",
                ),
                (
                    "recommends",
                    "parameterised queries with placeholders",
                    "escaping quotes by hand as the main defence",
                ),
                (
                    "states",
                    "the database driver sends parameters separately from the SQL text",
                    "parameters are pasted into the SQL text before it is sent",
                ),
                (
                    "recommends",
                    "giving the application's database account only the rights it needs",
                    "connecting as the database administrator for convenience",
                ),
            ],
        ),
        (
            "Git says my branch has diverged from origin/main. What does that mean?",
            "Diverged means both sides have commits the other lacks.",
            [
                (
                    "states",
                    "both your branch and the remote have new commits",
                    "a diverged branch has no new commits on either side",
                ),
                (
                    "recommends",
                    "fetching and then merging or rebasing onto origin/main",
                    "deleting the local repository and cloning again",
                ),
                (
                    "warns",
                    "force-pushing to a shared branch can overwrite others' work",
                    "force-pushing to a shared branch is always harmless",
                ),
                (
                    "states",
                    "git status shows how many commits each side is ahead",
                    "git cannot show how far the branches have diverged",
                ),
            ],
        ),
        (
            "My JavaScript loop with setTimeout prints 5 five times instead of 0 to 4. Why?",
            "This is the classic closure-over-a-loop-variable surprise.",
            [
                (
                    "states",
                    "var is function-scoped, so every callback sees the same variable",
                    "var creates a fresh variable for each loop iteration",
                ),
                (
                    "recommends",
                    "declaring the loop variable with let",
                    "adding a longer timeout so the values catch up",
                ),
                (
                    "states",
                    "the callbacks run after the loop has finished",
                    "each callback runs immediately inside its iteration",
                ),
                (
                    "states",
                    "let creates a new binding on every iteration",
                    "let behaves exactly like var inside loops",
                ),
            ],
        ),
        (
            "My program's memory use keeps growing while it runs. How do I find the leak?",
            "Steady growth usually means something keeps references it no longer needs.",
            [
                (
                    "recommends",
                    "taking heap snapshots at intervals and comparing them",
                    "adding more memory to the machine and moving on",
                ),
                (
                    "states",
                    "caches and global lists that are never cleared are frequent causes",
                    "memory leaks cannot happen in garbage-collected languages",
                ),
                (
                    "recommends",
                    "reproducing the growth with a smaller input first",
                    "only investigating in production under full load",
                ),
                (
                    "warns",
                    "a restart only hides the leak until it grows again",
                    "a nightly restart fixes the leak for good",
                ),
            ],
        ),
    ],
    "legal": [
        (
            "My landlord has not returned my deposit two months after I moved out. What can I do?",
            "Deposits generally have to be returned within a set period unless there are "
            "valid deductions.",
            [
                (
                    "recommends",
                    "asking the landlord in writing for the deposit or an itemised "
                    "list of deductions",
                    "only raising it in casual conversation",
                ),
                (
                    "states",
                    "many jurisdictions have deposit protection schemes or deadlines",
                    "landlords may keep deposits for as long as they like everywhere",
                ),
                (
                    "recommends",
                    "keeping the tenancy agreement, photos and messages as evidence",
                    "throwing away the old tenancy paperwork",
                ),
                (
                    "states",
                    "a small claims court can usually handle deposit disputes",
                    "deposit disputes can only be settled by a high court",
                ),
            ],
        ),
        (
            "Can my employer read my messages on my work laptop?",
            "The answer depends on the law where you work and on your employer's policies.",
            [
                (
                    "states",
                    "employers often monitor work devices under a written policy",
                    "employers are never allowed to monitor work devices",
                ),
                (
                    "recommends",
                    "reading your employer's IT and monitoring policy",
                    "assuming anything on the work laptop is fully private",
                ),
                (
                    "warns",
                    "personal accounts used on a work device may be visible to the employer",
                    "personal accounts are invisible on a work device",
                ),
                (
                    "states",
                    "data protection law may limit how monitoring is done",
                    "no law limits how an employer monitors staff",
                ),
            ],
        ),
        (
            "I received a parking ticket on private land. Do I have to pay?",
            "Private parking charges work differently from fines issued by the council.",
            [
                (
                    "states",
                    "a private parking charge is a claim for breach of contract, not "
                    "a criminal fine",
                    "a private parking charge is a criminal fine",
                ),
                (
                    "recommends",
                    "checking the signs and photos for whether the terms were clear",
                    "paying immediately without reading the charge",
                ),
                (
                    "warns",
                    "ignoring the charge entirely can lead to a court claim",
                    "ignoring the charge always makes it go away",
                ),
                (
                    "recommends",
                    "using the operator's appeal process within the deadline",
                    "waiting until after the appeal deadline to respond",
                ),
            ],
        ),
        (
            "My neighbour's tree hangs over my garden. Can I cut the branches?",
            "Overhanging branches are a common neighbour dispute.",
            [
                (
                    "states",
                    "in many places you may trim branches back to the boundary line",
                    "you may cut the whole tree down if branches overhang",
                ),
                (
                    "recommends",
                    "talking to the neighbour before cutting",
                    "cutting without telling the neighbour anything",
                ),
                (
                    "warns",
                    "protected trees or conservation areas may need permission",
                    "no tree ever needs permission before cutting",
                ),
                (
                    "states",
                    "the cut branches may belong to the tree's owner",
                    "cut branches always become your property to sell",
                ),
            ],
        ),
        (
            "I want to write a will. Do I need a lawyer?",
            "A will can be simple, but small mistakes can make it invalid.",
            [
                (
                    "states",
                    "a will usually needs to be signed in front of witnesses",
                    "a will is valid without a signature or witnesses",
                ),
                (
                    "warns",
                    "a witness who inherits under the will may lose that gift",
                    "beneficiaries make the best witnesses",
                ),
                (
                    "recommends",
                    "a lawyer for complex estates, businesses or blended families",
                    "a lawyer only for estates with no property at all",
                ),
                (
                    "recommends",
                    "reviewing the will after marriage, divorce or a new child",
                    "never updating the will once it is signed",
                ),
            ],
        ),
        (
            "The shop refuses to refund a kettle that broke after a week. What are my rights?",
            "Goods generally have to be of satisfactory quality and last a reasonable time.",
            [
                (
                    "states",
                    "a product that fails within days is likely not of satisfactory quality",
                    "a product that fails within days is always the buyer's fault",
                ),
                (
                    "states",
                    "the contract is with the shop, not the manufacturer",
                    "only the manufacturer is responsible, never the shop",
                ),
                (
                    "recommends",
                    "keeping the receipt and putting the complaint in writing",
                    "discarding the receipt once the kettle is unpacked",
                ),
                (
                    "warns",
                    "a no-refund sign does not remove statutory rights",
                    "a no-refund sign cancels every consumer right",
                ),
            ],
        ),
    ],
    "education": [
        (
            "How can I help my ten-year-old who struggles with multiplication tables?",
            "Multiplication facts stick best with short, regular and varied practice.",
            [
                (
                    "recommends",
                    "short daily practice sessions of about ten minutes",
                    "one long cramming session each weekend",
                ),
                (
                    "states",
                    "learning patterns such as the nines trick helps recall",
                    "patterns only confuse children learning tables",
                ),
                (
                    "recommends",
                    "games and real-life examples such as shopping",
                    "repeating the full tables aloud for an hour as punishment",
                ),
                (
                    "warns",
                    "pressure and timed tests can increase maths anxiety",
                    "pressure always improves children's maths",
                ),
            ],
        ),
        (
            "What is the best way to revise for a university exam in three weeks?",
            "Three weeks is enough time if revision is spread out and active.",
            [
                (
                    "recommends",
                    "spreading revision over the three weeks",
                    "leaving all revision for the last two nights",
                ),
                (
                    "states",
                    "testing yourself with past papers beats rereading notes",
                    "rereading notes is more effective than testing yourself",
                ),
                (
                    "recommends",
                    "sleeping well before the exam",
                    "staying up all night before the exam",
                ),
                (
                    "states",
                    "mixing topics in one session improves long-term retention",
                    "studying only one topic per week always gives the best retention",
                ),
            ],
        ),
        (
            "My teenager says reading is boring. How can I encourage them?",
            "Interest in reading often returns when the choice is theirs.",
            [
                (
                    "recommends",
                    "letting them choose what to read, including comics and graphic novels",
                    "allowing only classic novels",
                ),
                (
                    "states",
                    "audiobooks and magazines also build reading habits",
                    "audiobooks and magazines do not count as reading",
                ),
                (
                    "recommends",
                    "modelling reading yourself at home",
                    "using reading as a punishment",
                ),
                (
                    "warns",
                    "forcing long reading lists can make reluctance worse",
                    "forcing long reading lists always cures reluctance",
                ),
            ],
        ),
        (
            "I am an adult learner starting Spanish. How should I begin?",
            "Adults learn languages well with steady exposure and speaking practice.",
            [
                (
                    "recommends",
                    "practising a little every day rather than rarely for long",
                    "studying only once a month for many hours",
                ),
                (
                    "states",
                    "speaking from the start helps even with mistakes",
                    "learners should not speak until their grammar is perfect",
                ),
                (
                    "recommends",
                    "learning the most common words first",
                    "memorising the whole dictionary in alphabetical order",
                ),
                (
                    "states",
                    "adults can reach good fluency with consistent practice",
                    "adults can never become fluent in a new language",
                ),
            ],
        ),
        (
            "How do I write a strong thesis statement for a history essay?",
            "A thesis is the claim the whole essay sets out to defend.",
            [
                (
                    "states",
                    "a thesis makes an arguable claim rather than stating a fact",
                    "a thesis should only restate an undisputed fact",
                ),
                (
                    "recommends",
                    "making it specific about causes, people or periods",
                    "keeping it as vague as possible",
                ),
                (
                    "states",
                    "the thesis usually appears at the end of the introduction",
                    "the thesis belongs only in the last sentence of the essay",
                ),
                (
                    "recommends",
                    "revising the thesis after drafting the body",
                    "never changing the thesis once written",
                ),
            ],
        ),
        (
            "My student has dyslexia. What classroom adjustments help?",
            "Small adjustments can make a big difference for dyslexic learners.",
            [
                (
                    "recommends",
                    "giving extra time for reading and written tasks",
                    "giving less time so the student keeps up",
                ),
                (
                    "recommends",
                    "handouts in a clear font with good spacing",
                    "dense handouts in small decorative fonts",
                ),
                (
                    "states",
                    "dyslexia is not related to intelligence",
                    "dyslexia means the student has low intelligence",
                ),
                (
                    "warns",
                    "asking the student to read aloud without warning can cause distress",
                    "surprise reading aloud is the best way to build confidence",
                ),
            ],
        ),
    ],
}


def sentence(verb: str, clause: str) -> str:
    return VERBS[verb][1].format(c=clause, C=clause[:1].upper() + clause[1:])


def criterion(verb: str, clause: str, negate: bool = False) -> str:
    return VERBS[verb][2 if negate else 0].format(c=clause)


def render(opening: str, claims: list[str]) -> str:
    return " ".join([opening, *claims])


#: Scenario order in the file: splits alternate, so the first N items (``--limit``) cover
#: every domain and, past the first 60, both splits.
SCENARIO_ORDER = (0, 3, 1, 4, 2, 5)


def rows() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for s in SCENARIO_ORDER:
        for domain, scenarios in SCENARIOS.items():
            question, opening, claims = scenarios[s]
            every = [*claims, CLOSINGS[domain]]
            left_out = {s % 4, (s + 2) % 4}  # brief responses skip two claims, rotating
            for kind in ("full", "brief"):
                shown = [k for k in range(len(every)) if kind == "full" or k not in left_out]
                said = {k: sentence(every[k][0], every[k][1]) for k in shown}
                for k, (verb, good, bad) in enumerate(every):
                    negative = (s + k) % 2 == 1  # half the criteria name the wrong clause
                    asked, other = (bad, good) if negative else (good, bad)
                    present = k in said
                    # Minimal counterfactual: swap this claim's sentence, or add it.
                    swapped = dict(said)
                    swapped[k] = sentence(verb, bad if present else good)
                    satisfied = present != negative
                    out.append(
                        {
                            "item_id": f"{domain}-{s + 1:02d}-{kind}-c{k + 1}",
                            "split": "a" if s < 3 else "b",
                            "domain": domain,
                            "prompt": question,
                            "response": render(opening, [said[i] for i in sorted(said)]),
                            "criterion": criterion(verb, asked),
                            "points": -(k % 3 + 2) if negative else k % 3 + 3,
                            "tags": [f"domain:{domain}", f"axis:{AXES[verb]}", f"response:{kind}"],
                            "expected": "satisfied" if satisfied else "violated",
                            "reversed_response": render(
                                opening, [swapped[i] for i in sorted(swapped)]
                            ),
                            "negated_criterion": (
                                criterion(verb, other) if present else criterion(verb, asked, True)
                            ),
                        }
                    )
    return out


def main() -> None:
    path = Path(__file__).with_name("sample.jsonl")
    lines = [json.dumps(r, ensure_ascii=False) for r in rows()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} rubric items to {path}")


if __name__ == "__main__":
    main()
