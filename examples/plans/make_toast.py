def make_toast():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: grab a slice of bread
	find('breadslice')
	assert('close' to 'breadslice' )
		else: find('breadslice')
	grab('breadslice')
	# 2: put the bread in the toaster
	find('toaster')
	assert('breadslice' in 'hands' )
		else: find('breadslice')
		else: grab('breadslice')
	assert('close' to 'toaster' )
		else: find('toaster')
	putin('breadslice', 'toaster')
	# 3: switch on the toaster
	assert('breadslice' in 'toaster' )
		else: putin('breadslice', 'toaster')
	assert('toaster' is 'switchoff' )
		else: switchoff('toaster')
	switchon('toaster')
	# 4: Done
