def bring_coffeepot_and_cupcake_to_the_coffee_table():
	# 0: walk to kitchen
	walk('kitchen')
	# 1: grab the coffee pot
	find('coffeepot')
	assert('close' to 'coffeepot' )
		else: find('coffeepot')
	grab('coffeepot')
	# 2: take the cupcake out of the fridge
	find('fridge')
	assert('close' to 'fridge' )
		else: find('fridge')
	assert('fridge' is 'closed' )
		else: close('fridge')
	open('fridge')
	find('cupcake')
	assert('close' to 'cupcake' )
		else: find('cupcake')
	grab('cupcake')
	assert('fridge' is 'opened' )
		else: open('fridge')
	close('fridge')
	# 3: walk to the coffee table
	walk('livingroom')
	find('coffeetable')
	# 4: put the coffee pot on the coffee table
	assert('coffeepot' in 'hands' )
		else: find('coffeepot')
		else: grab('coffeepot')
	assert('close' to 'coffeetable' )
		else: find('coffeetable')
	putback('coffeepot', 'coffeetable')
	# 5: put the cupcake on the coffee table
	assert('cupcake' in 'hands' )
		else: find('cupcake')
		else: grab('cupcake')
	assert('close' to 'coffeetable' )
		else: find('coffeetable')
	putback('cupcake', 'coffeetable')
	# 6: Done
