def put_salmon_in_the_fridge():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: grab the salmon
	find('salmon')
	assert('close' to 'salmon' )
		else: find('salmon')
	grab('salmon')
	# 2: open the fridge if it is closed
	find('fridge')
	assert('close' to 'fridge' )
		else: find('fridge')
	if 'fridge' is 'closed':
		open('fridge')
	# 3: put the salmon in the fridge
	assert('salmon' in 'hands' )
		else: find('salmon')
		else: grab('salmon')
	assert('fridge' is 'opened' )
		else: open('fridge')
	putin('salmon', 'fridge')
	# 4: close the fridge
	assert('salmon' in 'fridge' )
		else: putin('salmon', 'fridge')
	close('fridge')
	# 5: Done
