# step: usdgrip author — a dual-arm carry on a bare bar, into an edits layer (the asset untouched), checked first, then validated
rm -f out/bar.edits.usda
slot="usdgrip author slot examples/bar.usda --prim /Bar --layer out/bar.edits.usda"
echo "\$ $slot --name left_grip --center=-0.3,0,0.02 --forward 0,0,-1 --span 0,1,0 --up-range 0.1 --angle 20 --lr left --group carry"
$slot --name left_grip --center=-0.3,0,0.02 --forward 0,0,-1 --span 0,1,0 --up-range 0.1 --angle 20 --lr left --group carry
echo "\$ $slot --name right_grip --center 0.3,0,0.02 --forward 0,0,-1 --span 0,1,0 --up-range 0.1 --angle 20 --lr right --group carry"
$slot --name right_grip --center 0.3,0,0.02 --forward 0,0,-1 --span 0,1,0 --up-range 0.1 --angle 20 --lr right --group carry
echo "\$ $slot --name beside --center 0,0.5,0.02 --forward 0,0,-1 --span 1,0,0 --up-range 0.1   # 0.5 m off the bar"
$slot --name beside --center 0,0.5,0.02 --forward 0,0,-1 --span 1,0,0 --up-range 0.1 && status=0 || status=$?
echo "(exit $status: refused by GS.009 before anything was written, as intended)"
echo "\$ cat out/bar.edits.usda"
cat out/bar.edits.usda
echo "\$ usdgrip validate out/bar.edits.usda"
usdgrip validate out/bar.edits.usda
echo "\$ usdgrip info out/bar.edits.usda"
usdgrip info out/bar.edits.usda
echo "\$ usdgrip info examples/bar.usda   # the asset itself is untouched"
usdgrip info examples/bar.usda
echo "\$ usdgrip sample out/bar.edits.usda --prim /Bar --count 2 --format text   # the two hands, jointly"
usdgrip sample out/bar.edits.usda --prim /Bar --count 2 --format text
