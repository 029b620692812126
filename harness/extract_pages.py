"""What a reader sees on the committed documentation pages (tests/data/docs, attributed in
tests/data/ATTRIBUTION.md): sentences copied from each rendered page, and the navigation
"chrome" no extracted text may contain. The extraction tests and ``bench/bench_html_extract.py``
measure against them.
"""

from __future__ import annotations

from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "tests" / "data" / "docs"

# Sentences as a reader sees them on each page (copied from the rendered page).
READER_SENTENCES = {
    "venv.html": [
        ("The solution for this problem is to create a virtual environment, a self-contained directory tree that "
         "contains a Python installation for a particular version of Python, plus a number of additional packages."),
        "python3 -m venv tutorial-env",
        "tutorial-env\\Scripts\\activate.bat",
        ("This will create the tutorial-env directory if it doesn’t exist, and also create directories inside it "
         "containing a copy of the Python interpreter and various supporting files."),
    ],
    "controlflow.html": [
        ("Loop statements may have an else clause; it is executed when the loop terminates through exhaustion of the "
         "iterable (with for) or when the condition becomes false (with while), but not when the loop is terminated "
         "by a break statement."),
        "The break statement, like in C, breaks out of the innermost enclosing for or while loop.",
    ],
    "tutorial-transactions.html": [
        "Transactions are a fundamental concept of all database systems.",
        ("In PostgreSQL, a transaction is set up by surrounding the SQL commands of the transaction with BEGIN and "
         "COMMIT commands."),
    ],
    "shared-mime-info-spec.pdf": [
        "Frequently, it is necessary to work out the correct MIME type for a file.",
        ("This is generally done by examining the file’s name or contents, and looking up the correct MIME type in a "
         "database."),
        "• A standard way of getting the MIME type for a file.",
    ],
    "libtasn1.pdf": [
        ("This manual is for GNU Libtasn1 (version 4.19.0, 18 August 2022), which is a library for Abstract Syntax "
         "Notation One (ASN.1) and Distinguished Encoding Rules (DER) manipulation."),
        "With this instruction another element is appended in the sequence.",
        "CHOICE: If NAME indicates a choice type, VALUE will specify the alternative selected.",
    ],
    "bzip2-manual.pdf": [
        "bzip2 compresses files using the Burrows-Wheeler block-sorting text compression algorithm, and Huffman coding.",
        ("In this case, bzip2 will decline to write compressed output to a terminal, as this would be entirely "
         "incomprehensible and therefore pointless."),
        ("In general, try and use the largest block size memory constraints allow, since that maximises the "
         "compression achieved."),
    ],
    "auth-delay.html": [
        "auth_delay.milliseconds (integer): The number of milliseconds to wait before reporting an authentication failure.",
    ],
    "local-project-installs.md": [
        "Editable installs allow you to install your project without copying any files.",
        "$ pip install -e path/to/SomeProject",
        "An editable install",
    ],
}
CHROME = ["Previous topic", "Next topic", "This Page", "Show Source", "Report a Bug", "Navigation", "Quick search",
          "Table of Contents", "modules |", "next |", "previous |", "Prev Up", "Home Next", "Theme"]
