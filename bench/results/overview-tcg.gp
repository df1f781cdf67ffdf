set terminal svg size 1000,500 dynamic
set output "overview-tcg.svg"
set title "kjit vs probes: slowdown vs native, same boot (TCG wall clock)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.5:*]
set ylabel "ratio to native (log)"
set grid ytics
set xtics rotate by -40 noenhanced
set key top left
plot "overview-tcg.dat" using 2:xtic(1) title "micro geomean", "" using 3 title "macro cold (builds the cache)", 1 notitle lc rgb "black"
