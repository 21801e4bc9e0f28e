# style.gp -- the shared look of every iommulab graph, loaded by the templates (lines.gp,
# stacked.gp) after they set the terminal. Terminal-independent: the same file serves pngcairo
# and svg. Only the terminal's default sans font is used: nothing to download or install.

# Names such as cmds_per_sync or cas_attempts must print as written, not as subscripts.
set termoption noenhanced
set termoption font "sans,11"

# Okabe-Ito colours: distinguishable with the common colour-vision deficiencies and in print.
# Linetype k is the colour of the k-th plugin of the run (in the scenario's order) in every
# graph; the host picks the marker and dash per line (plot_style_of in framework/plot/).
set linetype 1 lc rgb "#0072B2" lw 2 pt 7 ps 1.1
set linetype 2 lc rgb "#D55E00" lw 2 pt 5 ps 1.1
set linetype 3 lc rgb "#009E73" lw 2 pt 9 ps 1.3
set linetype 4 lc rgb "#CC79A7" lw 2 pt 11 ps 1.3
set linetype 5 lc rgb "#E69F00" lw 2 pt 13 ps 1.3
set linetype 6 lc rgb "#56B4E9" lw 2 pt 15 ps 1.3
set linetype 7 lc rgb "#000000" lw 2 pt 3 ps 1.1
set linetype 8 lc rgb "#999933" lw 2 pt 1 ps 1.3
# Reference lines (the device's ceiling): grey, drawn dashed.
set linetype 9 lc rgb "#555555" lw 1.5

set border 3 lw 1 lc rgb "#444444"
set tics nomirror out
set grid xtics ytics lw 1 lc rgb "#e0e0e0" dt 1
set grid mxtics mytics lw 1 lc rgb "#f2f2f2" dt 1
set key outside right top vertical Left reverse noautotitle spacing 1.2 samplen 3
set title offset 0,-0.3
set bars 1.5
set datafile commentschars "#"
set datafile missing "?"
set auto fix
set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
