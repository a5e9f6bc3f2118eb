"""The page toolkit: sections, tables, plots and the HTML/Markdown page they make.

The cue report, the judge card and the rubric report draw with it; none of it knows what a
run is.
"""
