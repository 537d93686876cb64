"""The built book as Chromium shows it: page widths, the notes under tables, the figure numbers.

``make book`` is run once and every page of the site is loaded once (MathJax done), then
measured in a window 1280 px wide and again at 390 px, a phone's width. The tests read
those measurements:

* no page is wider than the window, and nothing in a page's text runs past the window's
  edge; a wide table, equation or code block may scroll sideways inside its own box;
* every table a notebook stores is on its page, and every note "The table above ..."
  has right above it the table it speaks of, shown;
* every figure caption carries one number: the book's, or for a rerun of one of the
  paper's figures, the paper's number that opens the caption;
* every figure and notebook image is a link to its own file (on a phone a figure is
  drawn at less than half its size), and no name or word breaks between two of its letters:
  ``01_problem_setup`` may wrap after an underscore, never inside ``problem``.
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
WIDTHS = (1280, 390)

# The page's text: its article (the search page has none, only its main part).
_TEXT = "(document.querySelector('article.bd-article') || document.querySelector('main'))"

# A page is measured once MathJax has typeset its formulas.
_TYPESET = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
}"""

# Per page and window width: the page's scroll width, and the elements of the text that
# run past the window's edge other than inside a box that scrolls sideways and itself
# fits. MathJax's copy of each formula for screen readers is hidden on purpose (clipped
# to 1 px) and left out.
_WIDTH = """() => {
  const width = document.documentElement.clientWidth;
  const clipper = element => {
    for (let box = element.parentElement; box; box = box.parentElement) {
      const overflow = getComputedStyle(box).overflowX;
      if (overflow !== 'visible') return [box, overflow];
    }
    return [null, 'visible'];
  };
  const past = element => {
    const rect = element.getBoundingClientRect();
    return rect.width > 0 && (rect.right > width + 0.5 || rect.left < -0.5);
  };
  const offenders = [];
  for (const element of TEXT.querySelectorAll('*')) {
    if (element.closest('mjx-assistive-mml') || !past(element)) continue;
    const [box, overflow] = clipper(element);
    if ((overflow === 'auto' || overflow === 'scroll') && !past(box)) continue;
    const rect = element.getBoundingClientRect();
    offenders.push(`<${element.tagName.toLowerCase()} class="${element.getAttribute('class') || ''}"> ` +
                   `${Math.round(rect.left)}..${Math.round(rect.right)} px` +
                   (overflow === 'visible' ? '' : ` (cut off by overflow ${overflow})`) +
                   `: ${element.textContent.trim().slice(0, 60)}`);
  }
  return {scroll: document.documentElement.scrollWidth, width, offenders};
}""".replace("TEXT", _TEXT)

# Each note under a table: the element right before it, the nearest table before it in the
# page, whether that table is inside that element and shown above the note, and the data
# cells of its first body row.
_NOTES = """() => {
  const article = TEXT;
  const tables = [...article.querySelectorAll('table')];
  return [...article.querySelectorAll('p')].filter(p => p.textContent.trim().startsWith('The table above'))
    .map(note => {
      const before = tables.filter(table => table.compareDocumentPosition(note) & Node.DOCUMENT_POSITION_FOLLOWING);
      const table = before[before.length - 1] || null;
      const previous = note.previousElementSibling;
      const rect = table && table.getBoundingClientRect();
      const row = table && table.querySelector('tbody tr');
      return {note: note.textContent.trim().replace(/\\s+/g, ' '),
              previous: previous ? `<${previous.tagName.toLowerCase()} class="${previous.className}">` : null,
              inPrevious: !!(table && previous && previous.contains(table)),
              shown: !!(rect && rect.height > 0 && rect.width > 0 && table.checkVisibility()),
              above: !!(rect && rect.bottom <= note.getBoundingClientRect().top + 0.5),
              dataCells: row ? row.querySelectorAll('td').length : null};
    });
}""".replace("TEXT", _TEXT)

_CAPTIONS = """() => [...TEXT.querySelectorAll('figure')].map(figure => {
  const caption = figure.querySelector('figcaption');
  const number = caption && caption.querySelector('.caption-number');
  const text = caption && caption.querySelector('.caption-text');
  return {id: figure.id, number: number ? number.textContent.trim() : null,
          text: text ? text.textContent.trim().replace(/\\s+/g, ' ') : null};
})""".replace("TEXT", _TEXT)


# Each figure and each image a notebook cell shows: its file, and the address of the link
# around it (null if none).
_IMAGES = """() => [...TEXT.querySelectorAll('figure img, div.cell_output img')].map(image => {
  const link = image.closest('a');
  return {src: image.src, href: link ? link.href : null};
})""".replace("TEXT", _TEXT)

# Where the text's lines break between two letters or digits that belong together: not
# after a separator (_ . / - , : = ( [ |) and not between the words of a CamelCase name
# (Action|Elimination, CSSLUCB|Plus). A line ends where the next character sits over 8 px
# lower (a superscript moves less). A text node on one line gives every character its
# line's top; only a node that wraps is measured character by character. Code blocks
# scroll instead of wrapping, and formulas are MathJax's.
_BREAKS = """() => {
  const found = [];
  let text = '', tops = [];
  const check = () => {
    for (let i = 1; i < text.length; i++) {
      if (tops[i] === null || tops[i - 1] === null || tops[i] <= tops[i - 1] + 8) continue;
      const [a, b, c] = [text[i - 1], text[i], text[i + 1] || ''];
      const between = /[_./\\-,:=(\\[|]/.test(a) || (/[a-z]/.test(a) && /[A-Z]/.test(b)) ||
                      (/[A-Z]/.test(a) && /[A-Z]/.test(b) && /[a-z]/.test(c));
      if (!between && /[A-Za-z0-9]/.test(a) && /[A-Za-z0-9]/.test(b)) {
        found.push(text.slice(Math.max(0, i - 20), i) + '|' + text.slice(i, i + 20));
      }
    }
    text = '';
    tops = [];
  };
  const walker = document.createTreeWalker(TEXT, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (node.parentElement.closest('mjx-container, pre, script, style')) {
      check();
      continue;
    }
    const range = document.createRange();
    range.selectNodeContents(node);
    const lines = range.getClientRects();
    for (let i = 0; i < node.length; i++) {
      let top = lines.length === 1 ? lines[0].top : null;
      if (lines.length > 1) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getBoundingClientRect();
        top = rect.width || rect.height ? rect.top : null;
      }
      text += node.data[i];
      tops.push(/\\s/.test(node.data[i]) ? null : top);
    }
  }
  check();
  return [...new Set(found)];
}"""
_BREAKS = re.sub(r"\bTEXT\b", lambda _: _TEXT, _BREAKS)  # not the TEXT of SHOW_TEXT


def _pages(site: Path) -> list[Path]:
    """Every page of the site (the theme's templates under _static/ are no pages)."""
    return sorted(page for page in site.rglob("*.html")
                  if not any(part.startswith("_") for part in page.relative_to(site).parts))


@pytest.fixture(scope="module")
def shown(book, browser) -> dict[str, dict]:
    """For each page (path in the site): its widths per window width, its table notes and its captions."""
    page = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
    measured = {}
    try:
        for path in _pages(book):
            page.set_viewport_size({"width": WIDTHS[0], "height": 900})
            page.goto(path.as_uri())
            page.evaluate(_TYPESET)
            found = {"notes": page.evaluate(_NOTES), "captions": page.evaluate(_CAPTIONS),
                     "images": page.evaluate(_IMAGES), "widths": {}, "breaks": {}}
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                found["widths"][width] = page.evaluate(_WIDTH)
                found["breaks"][width] = page.evaluate(_BREAKS)
            measured[path.relative_to(book).as_posix()] = found
    finally:
        page.close()
    return measured


def test_every_page_fits_a_phone_and_a_desktop_window(shown):
    assert len(shown) >= 25 + 50, f"only {len(shown)} pages: the guides or the API pages are missing"
    problems = []
    for name, found in shown.items():
        for width, layout in found["widths"].items():
            assert layout["width"] == width, f"{name}: the window is {layout['width']} px, not {width}"
            if layout["scroll"] > layout["width"]:
                problems.append(f"{name} at {width} px: the page is {layout['scroll']} px wide")
            problems += [f"{name} at {width} px: {offender}" for offender in layout["offenders"][:3]]
    assert not problems, "\n".join(problems)


def test_every_image_links_to_its_own_file(shown):
    images = [(name, image) for name, found in shown.items() for image in found["images"]]
    unlinked = [f"{name}: {image['src'].rsplit('/', 1)[-1]} links to {image['href']}"
                for name, image in images if image["href"] != image["src"]]
    assert not unlinked, "\n".join(unlinked[:10])
    assert len(images) >= 15, f"only {len(images)} figures and notebook images in the book"


def test_no_name_breaks_between_two_of_its_letters(shown):
    # The teaching page's table once showed 01_proble|m_setup at 390 px, the API titles gbai.plotting.plo|t_...
    broken = [f"{name} at {width} px: {text!r}" for name, found in shown.items()
              for width, texts in found["breaks"].items() for text in texts]
    assert not broken, "\n".join(broken[:20])


def test_every_table_a_notebook_stores_is_on_its_page(book):
    # A table dropped without a note (notebook 1's, beside a figure, was) shows only here.
    dataframe = re.compile(r'<table[^>]*class="dataframe')
    for notebook in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        stored = sum(len(dataframe.findall(output.get("data", {}).get("text/html", "")))
                     for cell in nbformat.read(notebook, as_version=4).cells for output in cell.get("outputs", []))
        shown = len(dataframe.findall((book / f"{notebook.stem}.html").read_text(encoding="utf-8")))
        assert shown == stored, f"{notebook.stem}: {stored} tables stored, {shown} on the page"


def test_every_table_note_has_its_table_right_above_it(shown):
    notes = 0
    for name, found in shown.items():
        for note in found["notes"]:
            notes += 1
            where = f"{name}: {note['note'][:70]!r}"
            assert note["previous"] and note["previous"].startswith('<div class="cell'), (
                f"{where} follows {note['previous']}, not the cell of its table")
            assert note["inPrevious"], f"{where}: the cell right above holds no table (the table was dropped)"
            assert note["shown"] and note["above"], f"{where}: its table is hidden or not above it: {note}"
            columns = re.search(r"first (\d+) of (\d+) columns", note["note"])
            if columns:
                assert note["dataCells"] == int(columns.group(1)), (
                    f"{where}: the table above shows {note['dataCells']} columns")
    assert notes >= 5, f"only {notes} notes under tables: did make book stop fitting wide tables?"


def test_every_figure_caption_carries_one_number(shown):
    paper = re.compile(r"Figure \d+[a-z]? of the paper\b")
    numbers, reruns = [], []
    for name, found in shown.items():
        for caption in found["captions"]:
            where = f"{name} #{caption['id']}: {caption['number'] or ''} {caption['text'] or ''}"[:160]
            assert caption["text"], f"{where}: a figure without a caption"
            in_text = re.findall(r"\bFigures?\s+\d", caption["text"])
            if caption["number"] is not None:
                assert re.fullmatch(r"Figure \d+", caption["number"]) and not in_text, f"{where}: two numbers"
                numbers.append(int(caption["number"].split()[1]))
            else:
                assert paper.match(caption["text"]) and len(in_text) == 1, f"{where}: no number, or two"
                reruns.append(name)
    # The book numbers its other figures 1, 2, ... in reading order (the pages' names sort so).
    assert numbers == list(range(1, len(numbers) + 1)), numbers
    assert len(numbers) >= 10 and len(reruns) >= 4, (numbers, reruns)
