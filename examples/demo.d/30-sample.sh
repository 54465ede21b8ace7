# step: usdgrip sample — joint end-effector targets from the tote's grouped edges and the mug's handle
echo "\$ usdgrip sample examples/tote.usda --prim /Tote --count 3 --format text"
usdgrip sample examples/tote.usda --prim /Tote --count 3 --format text
echo
echo "\$ usdgrip sample examples/mug.usda --prim /Mug --ee-ids 1 --count 2 --format text"
usdgrip sample examples/mug.usda --prim /Mug --ee-ids 1 --count 2 --format text
echo
echo "\$ usdgrip sample examples/tote.usda --prim /Tote --count 50 -o out/tote_samples.json"
usdgrip sample examples/tote.usda --prim /Tote --count 50 -o out/tote_samples.json
echo "\$ usdgrip sample examples/tote.usda --prim /Tote --count 100000 -o out/tote_samples.npz"
usdgrip sample examples/tote.usda --prim /Tote --count 100000 -o out/tote_samples.npz
