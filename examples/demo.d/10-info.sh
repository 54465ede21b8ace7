# step: usdgrip info — the sites and slots usdgrip finds in the examples
for f in examples/gripper.usda examples/tote.usda examples/mug.usda; do
    echo "\$ usdgrip info $f"
    usdgrip info "$f"
done
