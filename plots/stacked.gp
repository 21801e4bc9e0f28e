# stacked.gp -- iommulab template: time per op in each phase as stacked bars, one bar per line,
# one panel per sweep point (small multiples, each on its own y scale).
#
# gnuplot -c stacked.gp DATA OUT TITLE SUBTITLE XLABEL YLABEL LABELS FLAGS PANELS
#   DATA      one block per panel (two blank lines apart); in a block one row per bar:
#             "bar label" then one column per phase (ns per op)
#   LABELS    the phase names, in column order, separated by "|"
#   FLAGS     words: png | svg (the terminal); scale=S (the y unit in ns: 1, 1000 or 1e6;
#             the values are divided by it)
#   PANELS    each panel's title ("cpus = 16"), in block order, separated by "|"
# Phases have their own colours (linetypes 21..), not the plugins' (1..8), so a phase is
# never mistaken for a plugin. Called once per graph by one gnuplot process: hence the reset.
reset

_dir = ""
_p = ARG0
while (strstrt(_p, "/") > 0) { _i = strstrt(_p, "/"); _dir = _dir . _p[1:_i]; _p = _p[_i+1:] }

_has(w) = strstrt(" " . ARG8 . " ", " " . w . " ") > 0
_scale = 1
do for [_k = 1:words(ARG8)] { _w = word(ARG8, _k); if (_w[1:6] eq "scale=") { _scale = _w[7:] + 0 } }

_n = 1
_s = ARG7
while (strstrt(_s, "|") > 0) { _n = _n + 1; _s = _s[strstrt(_s, "|") + 1:] }
array _label[_n]
_s = ARG7
do for [_k = 1:_n] {
	_j = strstrt(_s, "|")
	if (_j > 0) { _label[_k] = _s[1:_j - 1]; _s = _s[_j + 1:] } else { _label[_k] = _s }
}
_np = 1
_s = ARG9
while (strstrt(_s, "|") > 0) { _np = _np + 1; _s = _s[strstrt(_s, "|") + 1:] }
array _panel[_np]
_s = ARG9
do for [_k = 1:_np] {
	_j = strstrt(_s, "|")
	if (_j > 0) { _panel[_k] = _s[1:_j - 1]; _s = _s[_j + 1:] } else { _panel[_k] = _s }
}
_cols = _np < 3 ? _np : 3
_rows = int((_np + _cols - 1) / _cols)
_w = _cols == 1 ? 1000 : 1200
_h = 270 + 440 * _rows

if (_has("svg")) {
	set terminal svg size _w,_h dynamic background rgb "white"
} else {
	set terminal pngcairo size _w,_h background rgb "white"
}
set output ARG2
load _dir . "style.gp"
set linetype 21 lc rgb "#4477AA"
set linetype 22 lc rgb "#EE6677"
set linetype 23 lc rgb "#228833"
set linetype 24 lc rgb "#CCBB44"
set linetype 25 lc rgb "#66CCEE"
set linetype 26 lc rgb "#AA3377"
set linetype 27 lc rgb "#BBBBBB"
set linetype 28 lc rgb "#332288"

set ylabel ARG6
# Each panel its own scale: on a shared one the small sweep points would show no bars.
set yrange [0:*]
set grid noxtics nomxtics
set xtics scale 0 rotate by 30 right
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border rgb "#333333"
set boxwidth 0.6 relative
set offsets 0, 0, 0, 0
# One key for all panels, in the strip kept free under them.
set key at screen 0.5, 0.01 center bottom horizontal Left reverse noautotitle

set multiplot layout _rows,_cols title ARG3 . "\n" . ARG4 \
	margins 0.08, 0.98, 190.0 / _h, 1 - 80.0 / _h spacing 0.08, 130.0 / _h
do for [_k = 1:_np] {
	stats ARG1 index (_k - 1) using 2 nooutput
	set xrange [-0.6:STATS_records - 0.4]
	set title _panel[_k]
	if (_k > 1) { unset key }
	plot for [i = 1:_n] ARG1 index (_k - 1) using (column(i + 1) / _scale):xtic(1) \
		lt (20 + (i - 1) % 8 + 1) title _label[i]
}
unset multiplot
unset output
