# lines.gp -- iommulab template: one line (with 95% CI error bars) per data block.
#
# gnuplot -c lines.gp DATA OUT TITLE SUBTITLE XLABEL YLABEL LABELS FLAGS TERMINAL
#   DATA      blocks separated by two blank lines; columns: x mean ci_low ci_high "xtic"
#   LABELS    the key title of each block, in order, separated by "|"
#   FLAGS     words: logx logy (log scales); points (a single x: bars without lines);
#             datatics (x tics at the data, labelled from column 5); catx (x is an ordinal
#             of categories: pad half a step each side); paired (blocks go in pairs, e.g.
#             p50 then p99 of one plugin: same colour, the second dashed)
#   TERMINAL  png | svg
# The host fills these in; the .gp next to each .dat re-runs the same call.

# Where this template lives, so style.gp is found wherever the directory was copied.
_dir = ""
_p = ARG0
while (strstrt(_p, "/") > 0) { _i = strstrt(_p, "/"); _dir = _dir . _p[1:_i]; _p = _p[_i+1:] }

if (ARG9 eq "svg") {
	set terminal svg size 1000,650 dynamic background rgb "white"
} else {
	set terminal pngcairo size 1000,650 background rgb "white"
}
set output ARG2
load _dir . "style.gp"

_has(w) = strstrt(" " . ARG8 . " ", " " . w . " ") > 0

# Split LABELS on "|".
_n = 1
_s = ARG7
while (strstrt(_s, "|") > 0) { _n = _n + 1; _s = _s[strstrt(_s, "|") + 1:] }
array _label[_n]
_s = ARG7
do for [_k = 1:_n] {
	_j = strstrt(_s, "|")
	if (_j > 0) { _label[_k] = _s[1:_j - 1]; _s = _s[_j + 1:] } else { _label[_k] = _s }
}

set title ARG3 . "\n" . ARG4
set xlabel ARG5
set ylabel ARG6

if (_has("logx")) { set logscale x 2 }
if (_has("logy")) {
	set logscale y 10
	set format y "%.0s%c"
	# A log axis spanning under two decades shows one or two labels: add 2x and 5x ones.
	do for [_e = -6:15] { set ytics add (2 * 10.0 ** _e, 5 * 10.0 ** _e) }
}
if (!_has("logy")) { set yrange [0:*] }

# paired: blocks 2k-1 and 2k share colour k; the second of each pair is dashed.
_lc(i) = _has("paired") ? int((i - 1) / 2) + 1 : i
_dt(i) = (_has("paired") && (i % 2) == 0) ? 2 : 1
_pt(i) = (_has("paired") && (i % 2) == 0) ? 6 : 7

if (_has("catx")) {
	set xtics scale 0
	set offsets 0.5, 0.5, graph 0.05, graph 0.05
}

if (_has("points")) {
	plot for [i = 1:_n] ARG1 index (i - 1) using 1:2:3:4:xtic(5) with yerrorbars \
		lt _lc(i) dt 1 pt _pt(i) title _label[i]
} else {
	if (_has("datatics")) {
		plot for [i = 1:_n] ARG1 index (i - 1) using 1:2:3:4:xtic(5) with yerrorlines \
			lt _lc(i) dt _dt(i) pt _pt(i) title _label[i]
	} else {
		plot for [i = 1:_n] ARG1 index (i - 1) using 1:2:3:4 with yerrorlines \
			lt _lc(i) dt _dt(i) pt _pt(i) title _label[i]
	}
}
unset output
