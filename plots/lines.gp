# lines.gp -- iommulab template: one line (with 95% CI error bars) per data block.
#
# gnuplot -c lines.gp DATA OUT TITLE SUBTITLE XLABEL YLABEL LABELS FLAGS STYLES
#   DATA      blocks separated by two blank lines; columns: x mean ci_low ci_high "xtic"
#   LABELS    the key title of each block, in order, separated by "|"
#   FLAGS     words: png | svg (the terminal); logx logy (log scales); si (SI-prefixed tics
#             on a log y axis, "2M": only when no value is between 0 and 1, so no "500m"); points (a single
#             x: bars without lines); datatics (x tics at the data, labelled from column 5);
#             catx (x is an ordinal of categories: pad half a step each side)
#   STYLES    four numbers per block: linetype (the plugin's colour, style.gp), pointtype,
#             dashtype, point size; point size 0 marks a reference line (a device ceiling),
#             drawn as a plain dashed line; those blocks come last
# The host fills these in; the .gp next to each .dat re-runs the same call. Every graph of a
# run is drawn by one gnuplot process calling this file once per graph, hence the reset.
reset

# Where this template lives, so style.gp is found wherever the directory was copied.
_dir = ""
_p = ARG0
while (strstrt(_p, "/") > 0) { _i = strstrt(_p, "/"); _dir = _dir . _p[1:_i]; _p = _p[_i+1:] }

_has(w) = strstrt(" " . ARG8 . " ", " " . w . " ") > 0

if (_has("svg")) {
	set terminal svg size 1000,650 dynamic background rgb "white"
} else {
	set terminal pngcairo size 1000,650 background rgb "white"
}
set output ARG2
load _dir . "style.gp"

# Split LABELS on "|".
_n = 1
_s = ARG7
while (strstrt(_s, "|") > 0) { _n = _n + 1; _s = _s[strstrt(_s, "|") + 1:] }
# One spare entry: gnuplot evaluates the title of an empty "for" clause (no reference lines).
array _label[_n + 1]
_label[_n + 1] = ""
_s = ARG7
do for [_k = 1:_n] {
	_j = strstrt(_s, "|")
	if (_j > 0) { _label[_k] = _s[1:_j - 1]; _s = _s[_j + 1:] } else { _label[_k] = _s }
}
# A spare style for the same reason.
_st = ARG9 . " 1 1 1 0"
_lt(i) = word(_st, 4 * (i - 1) + 1) + 0
_pt(i) = word(_st, 4 * (i - 1) + 2) + 0
_dt(i) = word(_st, 4 * (i - 1) + 3) + 0
_ps(i) = word(_st, 4 * (i - 1) + 4) + 0
# The data blocks, then the reference lines (point size 0).
_nd = 0
do for [_k = 1:_n] { if (_ps(_k) > 0) { _nd = _k } }

set title ARG3 . "\n" . ARG4
set xlabel ARG5
set ylabel ARG6

if (_has("logx")) { set logscale x 2 }
if (_has("logy")) {
	set logscale y 10
	if (_has("si")) { set format y "%.0s%c" } else { set format y "%g" }
	# A log axis spanning under two decades shows one or two labels: add 2x and 5x ones.
	do for [_e = -6:15] { set ytics add (2 * 10.0 ** _e, 5 * 10.0 ** _e) }
}
if (!_has("logy")) { set yrange [0:*] }

if (_has("catx")) {
	set xtics scale 0
	set offsets 0.5, 0.5, graph 0.05, graph 0.05
}

if (_has("points")) {
	plot for [i = 1:_nd] ARG1 index (i - 1) using 1:2:3:4:xtic(5) with yerrorbars \
		lt _lt(i) dt 1 pt _pt(i) ps _ps(i) title _label[i], \
	     for [i = _nd + 1:_n] ARG1 index (i - 1) using 1:2 with lines \
		lt _lt(i) dt _dt(i) lw 1.5 title _label[i]
} else {
	if (_has("datatics")) {
		plot for [i = 1:_nd] ARG1 index (i - 1) using 1:2:3:4:xtic(5) with yerrorlines \
			lt _lt(i) dt _dt(i) pt _pt(i) ps _ps(i) title _label[i], \
		     for [i = _nd + 1:_n] ARG1 index (i - 1) using 1:2 with lines \
			lt _lt(i) dt _dt(i) lw 1.5 title _label[i]
	} else {
		plot for [i = 1:_nd] ARG1 index (i - 1) using 1:2:3:4 with yerrorlines \
			lt _lt(i) dt _dt(i) pt _pt(i) ps _ps(i) title _label[i], \
		     for [i = _nd + 1:_n] ARG1 index (i - 1) using 1:2 with lines \
			lt _lt(i) dt _dt(i) lw 1.5 title _label[i]
	}
}
unset output
