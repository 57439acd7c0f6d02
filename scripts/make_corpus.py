"""Write the sample corpus (sample_data/) and the bad-file fixtures (tests/data/).

Developer tool only: it needs `fpdf2` (pip install fpdf2), which users never do,
because the generated files are committed. Run from the repository root:

    python scripts/make_corpus.py

All texts are original and invented: the authors, journals, figures and DOIs
(prefix 10.5555, Crossref's test prefix) describe no real study. The citations
planted in the theses, and the verdict each deserves, are in
sample_data/expected.json; keep it in step when editing a text here.
"""

from __future__ import annotations

import datetime as dt
import io
from pathlib import Path

from fpdf import FPDF

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data"
FIXTURES = ROOT / "tests" / "data"
# A Unicode TrueType font, for "Müller", "–" and "°C"; the core fonts are Latin-1 only.
FONT_CANDIDATES = [
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf"),
    Path("/usr/share/fonts/TTF/DejaVuSerif.ttf"),
    Path("/Library/Fonts/DejaVuSerif.ttf"),
]
# Fixed dates keep regenerated PDFs byte-identical when nothing changed (all but
# encrypted.pdf, whose file ID and key pypdf draws at random).
FIXED_DATE = dt.datetime(2024, 1, 15, 12, 0, tzinfo=dt.timezone.utc)

# --- sources -----------------------------------------------------------------

OKAFOR_2019 = """\
# Low-stakes quizzing and long-term retention in secondary science classes

Nneka Okafor and Elin Lindqvist

Journal of Classroom Research, 14(2), 2019. https://doi.org/10.5555/citeq.2019.0142

## Abstract

We tested whether short, ungraded quizzes help secondary school students remember science content over months rather than days. In 16 classes with 412 students, half of each class took a weekly low-stakes quiz and the other half reread a summary of the same content. On a delayed test six weeks after the unit ended, quizzed students scored 14 percentage points higher than students who reread.

## Method

The study ran for eight weeks in grade 9 and grade 10 biology and chemistry classes in four schools. Quizzes had five short-answer questions, took about ten minutes and did not count towards grades. Teachers gave the correct answers at the end of each quiz. The control condition spent the same ten minutes rereading a one-page summary.

## Results

Weekly low-stakes quizzes raised delayed test scores in every school. The benefit was largest for factual questions that had appeared on a quiz. For transfer questions, which asked students to apply a concept to a new situation, the gain was smaller, about 5 percentage points, and it was not significant in two of the four schools. Students who were quizzed did not report more anxiety before tests than students who reread; most described the quizzes as useful.

## Discussion

Low-stakes quizzing is cheap and fits into ordinary lessons. Its effect on long-term retention of factual content in secondary science classes is robust across schools and teachers. Whether it also builds the ability to transfer knowledge remains open; our data suggest a weaker effect that depends on how quiz questions are written.
"""

MUELLER_2021 = """\
Spaced or blocked? Homework schedules and long-term learning in lower secondary mathematics

Hanna Müller
Working paper, Institute for School Pedagogy, 2021

Summary. Homework is usually blocked: the exercises on a topic are set in the week the topic is taught. This paper reports a field experiment with 9 classes (214 students, grade 7) in which the same exercises were either blocked or spaced, that is spread over the four weeks after the topic was taught.

Design. Each class received both schedules, for different topics, in a counterbalanced order. The number of exercises and the total homework time were the same in both schedules. A final test, written five weeks after the last topic, measured what students still knew.

Results. Spacing homework over several weeks improved final test scores compared with blocked homework: students solved 9 percent more final test items on spaced topics. The benefit appeared in all nine classes, though it varied in size.

Teachers and parents often fear that spaced homework frustrates students, because old topics keep coming back. We measured motivation with a short questionnaire after every week. Contrary to this fear, spaced schedules did not reduce students' motivation; the motivation scores under both schedules were practically identical. Several students said they liked meeting an old topic again because it felt easier the second time.

Limitations. The experiment lasted one school term and covered only mathematics. Homework completion was reported by students and was not checked independently.

Conclusion. Spacing homework is a free change to a teacher's planning that improves long-term learning without costing motivation.
"""

HARTMANN_2020 = """\
# Feedback timing in retrieval practice: a classroom experiment

Lena Hartmann, Kwame Osei and Petra Varga

Learning and Instruction Notes, 8, 2020. DOI: 10.5555/citeq.2020.0311

## Introduction

Retrieval practice works best when students learn the right answer after a mistake. Teachers can give that feedback at once or the next day. We compared immediate and delayed feedback after classroom quizzes.

## Method

Students in 12 classes of grade 8 (n = 287) took weekly quizzes in history. For half of the quizzes the correct answers were shown immediately after the quiz; for the other half they were discussed at the start of the next lesson. Four weeks later a final test repeated the questions that students had answered wrongly on a quiz.

## Results

Immediate feedback helped students retain the corrected answers: on the final test, students gave the right answer to 61 percent of their earlier errors after immediate feedback and to 48 percent after delayed feedback. Overall quiz performance did not differ between the conditions. We did not measure how confident students felt about their answers, nor how much they enjoyed the quizzes.

## Discussion

The advantage of immediate feedback concerns the correction of errors. When a quiz is short, showing the answers at once is the simpler option and gives better retention of corrected answers.
"""

CASTILLO_2018 = """\
# Surface and air temperature effects of extensive green roofs: a two-summer field study

Rosa Castillo, Anton Feld and Julien Moreau

Urban Climate Letters, 6(1), 2018. https://doi.org/10.5555/citeq.2018.0077

## Abstract

We measured temperatures on six extensive green roofs and six conventional bitumen roofs in one mid-sized European city during the summers of 2016 and 2017. At midday on clear days, green roof surfaces were up to 20 °C cooler than bitumen roofs. The air 1.5 m above the roofs was only 0.4 °C cooler on average.

## Measurements

Each roof carried surface sensors and a shaded air sensor at 1.5 m height; street-level stations stood below four of the buildings. Green roofs had a substrate of 8 to 12 cm planted with sedum.

## Results

Extensive green roofs lowered midday roof surface temperatures by up to 20 °C compared with bitumen roofs. The cooling of the air above the roof was small and vanished at night. At street level no cooling effect of the green roofs was detectable; street air temperature depended on shading and traffic, not on the roof above.

Water mattered. During a three-week drought in July 2017, unirrigated green roofs lost most of their cooling effect, while irrigated roofs kept it.

## Conclusion

Green roofs cool buildings and roof surfaces strongly, which lowers the cooling load of the top floor. They should not be expected to cool streets by themselves.
"""

NAKAMURA_2020 = """\
Heat waves and excess mortality in older adults: field notes from three cities

Yui Nakamura, public health department working notes

These notes summarise what we learned from the heat waves of the last five summers in three cities of similar size. They are meant for planners and for staff of health and social services.

Excess mortality. During heat waves, excess mortality rose by 18 percent among adults over 75, compared with the same weeks of summers without a heat wave. In adults under 65 no rise was visible. Excess mortality rose during the first two days of a heat wave, before hospitals noticed any increase in admissions.

Where deaths occurred. Most heat-related deaths occurred at home, often among people living alone on upper floors of buildings without shade. Deaths in hospitals and care homes rose less.

Cooling centres. All three cities opened air-conditioned cooling centres in libraries and community halls. They were little used by the oldest residents, many of whom could not travel to them. From our data we cannot say whether cooling centres prevented any deaths.

What helped. Telephone calls to registered older residents living alone, made every day of a heat wave by volunteers, reached people early. Outreach of this kind is cheap and was well received.

Nakamura, Y. (2020). Public health working notes, no. 7.
"""

SOURCES_TXT = {
    "mueller_2021_spaced_homework.txt": MUELLER_2021,
    "nakamura_heat_notes.txt": NAKAMURA_2020,
}
SOURCES_PDF = {
    "okafor_lindqvist_2019.pdf": OKAFOR_2019,
    "hartmann_2020_feedback.pdf": HARTMANN_2020,
    "castillo_2018_green_roofs.pdf": CASTILLO_2018,
}

# --- theses ------------------------------------------------------------------

THESIS_RETRIEVAL = """\
# Retrieval Practice in Everyday Teaching

Bachelor thesis, Teacher Education Programme

## 1 Introduction

Teachers spend much of their time helping students learn things that must still be known months later, at the end of a year or in a final examination. Yet many common study habits, such as rereading notes, produce a feeling of fluency that fades quickly. Research on memory has described two techniques that work against this forgetting: retrieval practice, in which students actively recall what they learned, and spacing, in which practice is distributed over time instead of being massed in one session.

This thesis asks how these two techniques can be used in ordinary lessons, without extra time or materials. It reviews classroom studies rather than laboratory experiments, because the conditions of a real school, with its fixed timetables, mixed abilities and limited attention, are where teachers have to decide.

## 2 Retrieval practice in the classroom

The most direct classroom evidence comes from quizzing studies. Weekly low-stakes quizzes raised scores on a delayed test by 14 percentage points in secondary science classes (Okafor & Lindqvist, 2019). The quizzes were short, ungraded and took only about ten minutes of a lesson, which makes them easy to adopt. Quizzing also improved students' ability to apply concepts to new situations (Okafor & Lindqvist, 2019), which is what teachers ultimately care about.

How long such benefits last is a practical question for teachers planning a school year. Okafor and Lindqvist (2019) reported that the benefit of quizzing was still clearly visible 12 weeks after the last quiz. If this holds, a single unit of quizzing could carry students through to the end of term.

Quizzing is not only about the questions but also about what happens after them. Immediate feedback after a quiz helped students retain the corrected answers (Hartmann et al., 2020). Hartmann et al. (2020) also found that immediate feedback increased students' confidence in their answers and their enjoyment of quizzing. Feedback therefore seems to be the part of retrieval practice that teachers can most easily improve.

Retrieval practice also appears to be robust outside general education. In vocational schools, regular practice tests improved final examination results in technical subjects (Brandt et al., 2017). This matters because vocational students often have less time for independent study than students in academic tracks.

## 3 Spacing homework

Homework offers a second place where learning can be strengthened without taking lesson time. In a field experiment in lower secondary mathematics, spacing homework over several weeks improved final test scores compared with blocked homework (Müller, 2021). The change concerned only the order of exercises, not their number.

A common objection to spacing is that it might frustrate students, since earlier topics keep returning. Müller (2021) showed that spaced homework schedules reduced students' motivation over the term. Teachers who adopt spacing would therefore need to explain the reason for it to their classes.

## 4 Conclusion

The reviewed studies suggest that quizzing, immediate feedback and spaced homework can all be introduced into everyday teaching at little cost. They also show where the evidence is thin: lasting effects on transfer and on motivation deserve further classroom research, ideally over a full school year and in more subjects than science and mathematics.

Future work should also examine how teachers themselves experience these changes, since a technique that teachers find awkward will not be kept up for long, however well it works in a study.

## References

Brandt, S., Keller, M., & Novak, T. (2017). Testing effects in vocational education: A field study in technical subjects. Journal of Vocational Learning, 11(4), 301–318. https://doi.org/10.5555/citeq.2017.0419

Hartmann, L., Osei, K., & Varga, P. (2020). Feedback timing in retrieval practice: A classroom experiment. Learning and Instruction Notes, 8, 55–71. https://doi.org/10.5555/citeq.2020.0311

Müller, H. (2021). Spaced or blocked? Homework schedules and long-term learning in lower secondary mathematics. Working paper, Institute for School Pedagogy.

Okafor, N., & Lindqvist, E. (2019). Low-stakes quizzing and long-term retention in secondary science classes. Journal of Classroom Research, 14(2), 101–119. https://doi.org/10.5555/citeq.2019.0142
"""

THESIS_HEAT = """\
# Cooling the City: Green Roofs and Heat Protection for Older Residents

Master thesis, Urban Planning

## 1 Introduction

Summers in European cities are getting hotter, and heat waves are becoming longer and more frequent. Dense districts store heat in stone, asphalt and roofs during the day and release it at night, so that temperatures in the city stay higher than in the surrounding countryside. This urban heat island is not only a matter of comfort. Heat waves raise mortality among older adults in cities [2–3]. Planning responses therefore have to consider both the built environment and the people most at risk.

This thesis looks at two kinds of response: physical measures on buildings, with green roofs as the main example, and social measures that protect vulnerable residents during heat waves. It asks what each can achieve and where their limits lie.

## 2 Green roofs

Green roofs are often presented as a universal remedy for urban heat. Field measurements give a more differentiated picture. Extensive green roofs lowered midday roof surface temperatures by up to 20 °C compared with bitumen roofs [1]. This reduces the heat load of the top floor and the energy needed for cooling it.

The effect on the city around the building is less clear. Green roofs measurably cooled the air at street level below the buildings, which makes them an effective measure for pedestrians [1]. If this were generally true, green roof programmes could replace street trees in narrow streets where trees do not fit.

Maintenance also decides how well a roof performs over a summer. Irrigated and unirrigated green roofs cooled equally well during a drought, so irrigation can be left out of the design [1]. This would lower the cost of green roofs considerably.

## 3 Protecting older residents

Heat does not affect everyone equally. During heat waves, excess mortality rose by 18 percent among adults over 75 [2]. Younger adults showed much smaller changes, which suggests that protection should be targeted by age.

Where people die matters for the choice of measures. Most heat-related deaths occurred at home, and cooling centres prevented most of these deaths in the cities studied [2]. Cities that open cooling centres in libraries and community halls may therefore protect many older residents.

## 4 Conclusion

Green roofs and social measures address different parts of the heat problem. Roofs protect buildings; outreach and care protect people. A heat plan for a city needs both, and it should not expect green roofs to cool the streets on their own.

## References

[1] Castillo, R., Feld, A., & Moreau, J. (2018). Surface and air temperature effects of extensive green roofs: A two-summer field study. Urban Climate Letters, 6(1), 12–29. https://doi.org/10.5555/citeq.2018.0077

[2] Y. Nakamura, "Heat waves and excess mortality in older adults: field notes from three cities," Public health working notes, no. 7, 2020.

[3] European Heat Health Network, Heat-health action plans: guidance for municipalities, Report 2019/4, 2019.
"""

THESES = {
    "thesis_retrieval_practice.pdf": THESIS_RETRIEVAL,
    "thesis_urban_heat.pdf": THESIS_HEAT,
}


def main() -> None:
    SAMPLES.mkdir(exist_ok=True)
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, text in SOURCES_TXT.items():
        (SAMPLES / name).write_text(text, encoding="utf-8")
    for name, text in {**SOURCES_PDF, **THESES}.items():
        (SAMPLES / name).write_bytes(render_pdf(text))
    write_fixtures()
    print(f"wrote {len(SOURCES_TXT) + len(SOURCES_PDF) + len(THESES)} sample files and the fixtures")


def render_pdf(markdown: str) -> bytes:
    """A PDF with a real text layer: '# ' is a title, '## ' a heading, rest paragraphs."""
    pdf = _new_pdf()
    pdf.add_page()
    for block in markdown.strip().split("\n\n"):
        block = block.strip()
        if block.startswith("# "):
            _write(pdf, block[2:], size=16, gap=4)
        elif block.startswith("## "):
            _write(pdf, block[3:], size=13, gap=2)
        else:
            _write(pdf, block, size=11.5, gap=3)
    return bytes(pdf.output())


def _new_pdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.set_margins(25, 25, 25)
    pdf.set_auto_page_break(True, margin=25)
    pdf.set_creation_date(FIXED_DATE)
    font = next((p for p in FONT_CANDIDATES if p.exists()), None)
    if font is None:
        raise SystemExit("needs DejaVuSerif.ttf (Debian: fonts-dejavu-core)")
    pdf.add_font("body", fname=str(font))
    pdf.set_font("body", size=11.5)
    return pdf


def _write(pdf: FPDF, text: str, *, size: float, gap: float) -> None:
    pdf.set_font("body", size=size)
    pdf.multi_cell(0, size * 0.55, " ".join(text.split()))
    pdf.ln(gap)


def write_fixtures() -> None:
    """Bad files for the parser tests: truncated, encrypted, empty, image-only."""
    from pypdf import PdfReader, PdfWriter

    good = render_pdf(OKAFOR_2019)
    # Cut inside the first page's content stream: no xref, no trailer, no page tree.
    (FIXTURES / "truncated.pdf").write_bytes(good[: len(good) // 3])
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(good)))
    # RC4 needs no optional crypto package to write or to detect.
    writer.encrypt(user_password="secret", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    (FIXTURES / "encrypted.pdf").write_bytes(buffer.getvalue())
    (FIXTURES / "empty.pdf").write_bytes(b"")
    (FIXTURES / "image_only.pdf").write_bytes(_image_only_pdf())


def _image_only_pdf() -> bytes:
    """One page holding only a picture of text, like a scan without OCR."""
    from PIL import Image, ImageDraw

    image = Image.new("L", (600, 200), color=255)
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 20, 580, 180), outline=0, width=3)
    for y in range(50, 160, 20):
        draw.line((40, y, 560, y), fill=0, width=6)  # lines standing in for scanned words
    pdf = FPDF(format="A4")
    pdf.set_creation_date(FIXED_DATE)
    pdf.add_page()
    pdf.image(image, x=20, y=30, w=170)
    return bytes(pdf.output())


if __name__ == "__main__":
    main()
