# step: SimReady graspable prop — grasp vector lines listed and checked (one misses on purpose)
echo "\$ usdgrip info examples/graspable_prop.usda"
usdgrip info examples/graspable_prop.usda
echo "\$ usdgrip validate examples/graspable_prop.usda"
usdgrip validate examples/graspable_prop.usda && status=0 || status=$?
echo "(exit $status: grasp_identifier_02 misses the block, GP.001, as intended)"
