# phases.gp -- iommulab template: stacked bars of time per op in each phase, one bar per line.
#
# gnuplot -c phases.gp DATA OUT TITLE SUBTITLE XLABEL YLABEL LABELS FLAGS TERMINAL
#   DATA      one row per bar: "bar label" then one column per phase (ns per op)
#   LABELS    the phase names, in column order, separated by "|"
#   FLAGS     reserved (pass "")
#   TERMINAL  png | svg

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
set yrange [0:*]
# Bars sit at x = 0, 1, ...: frame them evenly whatever the number of lines.
stats ARG1 using 2 nooutput
set xrange [-0.6:STATS_records - 0.4]
set offsets 0, 0, graph 0.05, 0
set grid noxtics nomxtics
set xtics scale 0
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.6 relative

plot for [i = 1:_n] ARG1 using (column(i + 1)):xtic(1) lt i title _label[i]
unset output
